import Combine
import Foundation
import LatchkeyClient
import UIKit

/// The stand-ins' switches and records, for the tests.
@MainActor
enum StandIns {
    static var application: UIApplication { UIApplication.shared }

    static func postWillEnterForeground() {
        NotificationCenter.default.post(name: UIApplication.willEnterForegroundNotification, object: nil)
    }

    static func willChangeCount(of object: AuthObservableObject) -> Int { object.objectWillChange.sendCount }
}

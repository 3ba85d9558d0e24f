// A stand-in for the part of UIKit that the SDK's lifecycle code uses (`followAppLifecycle()`, background tasks), so
// that Apple-only code compiles and runs on Linux (scripts/check-keychain). Never part of the SDK.
//
// The declarations have the shapes and isolation the iOS SDK gives them: `UIApplication` is `@MainActor`, its
// notification names are nonisolated constants, `beginBackgroundTask` takes a `@MainActor @Sendable` expiration
// handler. Behind them, the application records the background tasks begun and ended, and can expire them.
import Foundation

/// `UIBackgroundTaskIdentifier`.
public struct UIBackgroundTaskIdentifier: RawRepresentable, Hashable, Sendable {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

/// `UIApplication`, with what tests need to see its background tasks.
@MainActor
public final class UIApplication {
    public static let shared = UIApplication()
    public nonisolated static let willEnterForegroundNotification = Notification.Name("UIApplicationWillEnterForegroundNotification")
    public nonisolated static let protectedDataDidBecomeAvailableNotification = Notification.Name("UIApplicationProtectedDataDidBecomeAvailable")

    private var next = 1
    private var running: [UIBackgroundTaskIdentifier: (name: String?, expiration: (@MainActor @Sendable () -> Void)?)] = [:]

    /// The names of the background tasks begun so far.
    public private(set) var begunTaskNames: [String] = []
    /// How many background tasks are running.
    public var runningTaskCount: Int { self.running.count }

    public func beginBackgroundTask(
        withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil
    ) -> UIBackgroundTaskIdentifier {
        let identifier = UIBackgroundTaskIdentifier(rawValue: self.next)
        self.next += 1
        self.running[identifier] = (taskName, handler)
        self.begunTaskNames.append(taskName ?? "")
        return identifier
    }

    public func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) {
        // UIKit logs ending an identifier twice (or `.invalid`) as a programming error; so does this stand-in.
        precondition(self.running.removeValue(forKey: identifier) != nil, "endBackgroundTask(\(identifier.rawValue)): not running")
    }

    /// Runs every running task's expiration handler, as the system does when background time is up.
    public func expireBackgroundTasks() {
        for (_, task) in self.running { task.expiration?() }
    }

    /// Forgets every task.
    public func reset() {
        self.running = [:]
        self.begunTaskNames = []
    }
}

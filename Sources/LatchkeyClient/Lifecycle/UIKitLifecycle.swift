#if canImport(UIKit) && !os(watchOS)
import Foundation
import UIKit

extension LatchkeySession {
    /// Follows the app's UIKit lifecycle until the calling task is cancelled: ``revalidate()`` when the app comes to
    /// the foreground, a new bootstrap when protected data becomes available after a locked launch, and every refresh
    /// inside a `UIApplication` background task (unless ``Configuration/backgroundExecution`` names another).
    ///
    /// ```swift
    /// WindowGroup { RootView() }
    ///     .task { await session.followAppLifecycle() }
    /// ```
    ///
    /// Not for app extensions, which have no `UIApplication`.
    @available(iOSApplicationExtension, unavailable)
    @available(tvOSApplicationExtension, unavailable)
    @available(visionOSApplicationExtension, unavailable)
    public func followAppLifecycle() async {
        if self.backgroundExecution == nil { self.backgroundExecution = UIApplicationBackgroundExecution() }
        let (events, continuation) = AsyncStream<AppLifecycleEvent>.makeStream()
        let (foreground, protectedData) = await MainActor.run {
            (UIApplication.willEnterForegroundNotification, UIApplication.protectedDataDidBecomeAvailableNotification)
        }
        let center = NotificationCenter.default
        let observers = [
            center.addObserver(forName: foreground, object: nil, queue: nil) { _ in continuation.yield(.willEnterForeground) },
            center.addObserver(forName: protectedData, object: nil, queue: nil) { _ in continuation.yield(.protectedDataDidBecomeAvailable) },
        ]
        await withTaskCancellationHandler {
            await self.follow(events)
        } onCancel: {
            continuation.finish()
        }
        for observer in observers { center.removeObserver(observer) }
    }
}

/// ``BackgroundExecution`` over `UIApplication.beginBackgroundTask(withName:expirationHandler:)`.
@available(iOSApplicationExtension, unavailable)
@available(tvOSApplicationExtension, unavailable)
@available(visionOSApplicationExtension, unavailable)
struct UIApplicationBackgroundExecution: BackgroundExecution {
    func beginTask(named name: String) async -> @Sendable () async -> Void {
        let task = await MainActor.run {
            let task = BackgroundTask()
            // When the time is up the system calls the expiration handler, which must end the task; so may the SDK.
            task.identifier = UIApplication.shared.beginBackgroundTask(withName: name) { task.end() }
            return task
        }
        return { await task.end() }
    }
}

/// A background task, ended once on the main actor by whichever comes first: the SDK or the system's expiration.
@MainActor
private final class BackgroundTask {
    var identifier = UIBackgroundTaskIdentifier.invalid

    func end() {
        guard self.identifier != .invalid else { return }
        UIApplication.shared.endBackgroundTask(self.identifier)
        self.identifier = .invalid
    }
}
#endif

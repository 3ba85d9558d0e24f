#if canImport(Darwin)
import CoreFoundation
import Foundation

/// A ``StoreChangeNotifier`` over the Darwin notify center (`CFNotificationCenterGetDarwinNotifyCenter()`), which
/// reaches every process of the device: an app and its extensions that share a Keychain item hear each other's writes.
///
/// ``LatchkeySession`` makes one by default for a ``KeychainStore`` with an access group (``init(for:)``). A Darwin
/// notification carries only its name, never data; a process that hears one reads the store. The center calls back on
/// the main thread, so a process hears posts while its main run loop runs (an app's and an extension's do).
public final class DarwinStoreChangeNotifier: StoreChangeNotifier {
    /// The notification's name: the same in every process that shares the store.
    public let name: String

    /// A notifier that posts and hears `name`.
    public init(name: String) { self.name = name }

    /// A notifier named after `store`'s Keychain item: its access group, service and account.
    public convenience init(for store: KeychainStore) {
        let item = store.location
        self.init(name: "latchkey.credentials-changed/\(item.accessGroup ?? "")/\(item.service)/\(item.account)")
    }

    /// Posts the notification to every process of the device.
    public func post() {
        CFNotificationCenterPostNotification(CFNotificationCenterGetDarwinNotifyCenter(), CFNotificationName(self.name as CFString), nil, nil, true)
    }

    /// A stream woken by each post of the notification, by this process or another, from now on.
    public func changes() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let listener = Listener(continuation)
        let name = self.name
        CFNotificationCenterAddObserver(
            CFNotificationCenterGetDarwinNotifyCenter(), Unmanaged.passUnretained(listener).toOpaque(),
            { _, observer, _, _, _ in
                guard let observer else { return }
                Unmanaged<Listener>.fromOpaque(observer).takeUnretainedValue().continuation.yield()
            },
            name as CFString, nil, .deliverImmediately)
        continuation.onTermination = { _ in
            CFNotificationCenterRemoveObserver(
                CFNotificationCenterGetDarwinNotifyCenter(), Unmanaged.passUnretained(listener).toOpaque(), CFNotificationName(name as CFString), nil)
            // Kept until the main queue has run whatever callback was already under way there.
            DispatchQueue.main.async { withExtendedLifetime(listener) {} }
        }
        return stream
    }
}

/// What the center's callback reaches through its observer pointer.
private final class Listener: Sendable {
    let continuation: AsyncStream<Void>.Continuation

    init(_ continuation: AsyncStream<Void>.Continuation) { self.continuation = continuation }
}
#endif

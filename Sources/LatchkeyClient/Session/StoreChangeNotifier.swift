import Foundation

/// Tells the other processes that share a secure store (an app and its extensions) that a session wrote to it, and hears
/// when they did.
///
/// A ``LatchkeySession`` given one in ``LatchkeySession/Configuration/storeChangeNotifier`` posts after each write of its
/// credentials (a sign-in, a refresh, a sign-out) and, from its first use on, follows each post: it reads the store again
/// and takes what another process wrote, so a widget signs out when the app does and moves to the app's next user. On
/// Apple platforms `DarwinStoreChangeNotifier` reaches every process of the device; ``InProcessStoreChangeNotifier``
/// reaches the sessions of one process (tests, Linux).
public protocol StoreChangeNotifier: Sendable {
    /// Says that the shared store changed. It carries nothing: whoever hears it reads the store.
    func post()
    /// One element for each post from now on (by this process or another; several close together may arrive as one),
    /// until the stream is dropped.
    func changes() -> AsyncStream<Void>
}

/// A ``StoreChangeNotifier`` within one process: every session given the same instance hears the others' writes, as
/// two processes given one `DarwinStoreChangeNotifier` name do. For tests, and for several sessions of one process over
/// one store (Linux has no notify center across processes: there a session follows other processes' writes at
/// ``LatchkeySession/revalidate()``).
public final class InProcessStoreChangeNotifier: StoreChangeNotifier {
    private let listeners = Locked<[UUID: AsyncStream<Void>.Continuation]>([:])

    /// Creates a notifier no one listens to yet.
    public init() {}

    /// Wakes every stream of ``changes()``.
    public func post() {
        for listener in self.listeners.withLock({ Array($0.values) }) { listener.yield() }
    }

    /// A stream woken by each ``post()`` from now on.
    public func changes() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        self.listeners.withLock { $0[id] = continuation }
        continuation.onTermination = { [listeners] _ in listeners.withLock { $0[id] = nil } }
        return stream
    }
}

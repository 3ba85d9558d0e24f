import Foundation
import LatchkeyClient

// The same recorder as the SDK unit tests' (Tests/LatchkeyClientTests/Support/FlakySecureStore.swift): the two test
// targets are in different packages and share no sources.
/// Collects a session's events from the moment it is made.
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [LatchkeyEvent] = []
    private var task: Task<Void, Never>?

    init(_ session: LatchkeySession) async {
        let events = await session.events()
        self.task = Task { for await event in events { self.lock.withLock { self.recorded.append(event) } } }
    }

    deinit { self.task?.cancel() }

    /// The events so far.
    var events: [LatchkeyEvent] { self.lock.withLock { self.recorded } }

    /// Whether `event` arrives within five seconds.
    func saw(_ event: LatchkeyEvent) async -> Bool {
        for _ in 0..<500 {
            if self.events.contains(event) { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return false
    }
}

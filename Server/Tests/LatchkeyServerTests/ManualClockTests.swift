import Foundation
import LatchkeyServer
import Synchronization
import Testing

/// The tests' clock: time moves only when a test moves it, and what waits on it (the server's background loops) wakes
/// then, not in real time.
@Suite struct ManualClockTests {
    @Test func aSleepEndsWhenTheClockIsMovedPastItsEndAndNotBefore() async throws {
        let clock = ManualClock()
        let woke = Flag()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await clock.sleep(for: 60)
                woke.set()
            }
            await Task.yield()
            clock.advance(by: 59)
            await Task.yield()
            #expect(woke.value == false)
            // The sleeper may still be registering: move the clock until it wakes (each step past its end).
            for _ in 0..<1_000 where !woke.value {
                clock.advance(by: 1)
                await Task.yield()
            }
            if !woke.value { group.cancelAll() }  // never woke: the cancelled sleep fails the test
            try await group.waitForAll()
        }
        #expect(woke.value)
    }

    @Test func aSleepOfNothingReturnsAtOnce() async throws {
        try await ManualClock().sleep(for: 0)
    }

    @Test func aCancelledSleepThrowsWithoutTheClockMoving() async throws {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(for: 3_600) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}

private final class Flag: Sendable {
    private let state = Mutex(false)
    var value: Bool { self.state.withLock { $0 } }
    func set() { self.state.withLock { $0 = true } }
}

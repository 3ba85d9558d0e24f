import Foundation
import LatchkeyAPI
import LatchkeyClient
import Testing

/// Issue 16, item 1 (SDK side): a refresh runs inside a background task, so an app suspended mid-refresh still gets
/// (and stores) the answer the server committed.
@Suite struct BackgroundRefreshTests {
    @Test func aRefreshIsSentAndAnsweredInsideABackgroundTaskThatThenEnds() async throws {
        let background = RecordingBackgroundExecution()
        let activeWhileSent = Counter()
        let fixture = Fixture { request in
            if request.url.path == "/api/v1/auth/refresh" {
                if background.active == 1 { activeWhileSent.increment() }
                return .json(200, Samples.pair(2))
            }
            return Samples.me(accepting: ["access-2"], request)
        }
        try fixture.storeSession()
        let session = fixture.session { $0.backgroundExecution = background }
        try await session.refresh()
        #expect(activeWhileSent.count == 1)
        #expect(background.names == ["Latchkey token refresh"])
        #expect(background.active == 0)
        #expect(try fixture.store.load()?.session?.refreshToken == "refresh-2")
    }

    @Test func theBackgroundTaskEndsWhenNoAnswerArrives() async throws {
        let background = RecordingBackgroundExecution()
        let fixture = Fixture { _ in throw URLError(.timedOut) }
        try fixture.storeSession()
        await #expect(throws: LatchkeyError.offline(.timedOut)) { try await fixture.session { $0.backgroundExecution = background }.refresh() }
        #expect(background.names.count == 1)
        #expect(background.active == 0)
    }
}

/// Background tasks as a test sees them: which were begun, how many are still running.
final class RecordingBackgroundExecution: BackgroundExecution, @unchecked Sendable {
    private let lock = NSLock()
    private var begun: [String] = []
    private var running = 0

    var names: [String] { self.lock.withLock { self.begun } }
    var active: Int { self.lock.withLock { self.running } }

    func beginTask(named name: String) async -> @Sendable () async -> Void {
        self.lock.withLock {
            self.begun.append(name)
            self.running += 1
        }
        return { self.lock.withLock { self.running -= 1 } }
    }
}

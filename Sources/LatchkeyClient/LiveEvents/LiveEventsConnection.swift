import Foundation
import LatchkeyAPI

/// How one connection of the live event stream ended, and so what the stream does next.
enum LiveConnectionOutcome: Sendable, Equatable {
    /// The server revoked the session; the stream has said so and ends.
    case revoked
    /// The stream ends with this reason.
    case ended(LiveEventsEnd)
    /// The server refused this token (401 before the upgrade) or let it expire (`token.expired`, close 4002): connect
    /// again with another one.
    case rejected(token: String, connected: Bool)
    /// Another session is in use now (a sign-in, another process's): connect again with it, or end when there is none.
    case sessionChanged
    /// The connection dropped or could not be made: connect again after a backoff (at least `retryAfter`, from a 429).
    case dropped(connected: Bool, retryAfter: TimeInterval?)
    /// The consumer stopped iterating.
    case cancelled
}

/// One WebSocket of the live event stream, for one session generation: reads its frames into the stream, keeps its
/// access token current (`reauthenticate` after each refresh), and tells how it ended.
struct LiveEventsConnection: Sendable {
    let session: LatchkeySession
    let connection: any WebSocketConnection
    let target: LiveEventsTarget
    let output: AsyncStream<LiveEvent>.Continuation
    /// The access token the server knows this connection by.
    private let token: Locked<String>

    init(session: LatchkeySession, connection: any WebSocketConnection, target: LiveEventsTarget, output: AsyncStream<LiveEvent>.Continuation) {
        self.session = session
        self.connection = connection
        self.target = target
        self.output = output
        self.token = Locked(target.token)
    }

    /// Reads frames until the connection ends, while `sessionEvents` (the session's own events, subscribed before the
    /// token was read) tell of refreshes to pass on and of the session ending.
    func run(following sessionEvents: AsyncStream<LatchkeyEvent>) async -> LiveConnectionOutcome {
        await withTaskGroup(of: LiveConnectionOutcome?.self) { group in
            group.addTask { await self.receiveFrames() }
            group.addTask {
                await self.follow(sessionEvents)
                return nil
            }
            defer {
                group.cancelAll()
                self.connection.close()
            }
            for await outcome in group {
                if let outcome { return outcome }
            }
            return .cancelled
        }
    }

    /// After a refresh, sends the new token (once per token); closes the connection when the session is no longer in use.
    private func follow(_ sessionEvents: AsyncStream<LatchkeyEvent>) async {
        for await _ in sessionEvents {
            guard await self.session.isCurrent(self.target.generation) else { return self.connection.close() }
            if let token = await self.session.accessToken(of: self.target.generation) { await self.reauthenticate(with: token) }
        }
    }

    /// Sends `reauthenticate` with `token` unless the server already knows the connection by it.
    private func reauthenticate(with token: String) async {
        let isNew = self.token.withLock { current in
            guard current != token else { return false }
            current = token
            return true
        }
        guard isNew, let text = SessionEventFrame.reauthenticate(token).text else { return }
        try? await self.connection.send(text)
    }

    private func receiveFrames() async -> LiveConnectionOutcome {
        var connected = false
        var expired = false
        var displaced = false
        while true {
            let message: WebSocketMessage
            do {
                message = try await self.nextMessage()
            } catch {
                guard !Task.isCancelled else { return .cancelled }
                return Self.outcome(of: error, token: self.currentToken, connected: connected, now: self.session.clock.now())
            }
            guard !Task.isCancelled else { return .cancelled }
            switch message {
            case .closed(let code):
                if displaced, await self.session.isCurrent(self.target.generation) { return .ended(.tooManyConnections) }
                return await self.outcome(ofClose: code, expired: expired, connected: connected)
            case .text(let text):
                guard let frame = SessionEventFrame(text: text) else { continue }  // not a frame: skipped
                switch frame.type {
                case SessionEventType.connected: connected = true
                case SessionEventType.tokenExpired: expired = true
                case SessionEventType.error where frame.error == "too_many_sockets":
                    // The frame before close 4008, which some WebSocket stacks report as another code.
                    displaced = true
                    continue
                case SessionEventType.sessionRevoked:
                    await self.session.endRevokedSession(generation: self.target.generation)
                    self.output.yield(frame.liveEvent ?? .sessionRevoked(nil))
                    return .revoked
                // Refreshed before the app hears it, so the token it reads then carries the new claims.
                case SessionEventType.claimsChanged: await self.refreshForNewClaims()
                default: break
                }
                if let event = frame.liveEvent { self.output.yield(event) }
                if frame.type == SessionEventType.tokenExpiring { await self.replaceExpiringToken() }
            }
        }
    }

    /// The next message; the consumer stopping closes the connection, which ends the wait.
    private func nextMessage() async throws -> WebSocketMessage {
        try await withTaskCancellationHandler {
            try await self.connection.receive()
        } onCancel: {
            self.connection.close()
        }
    }

    private var currentToken: String { self.token.withLock { $0 } }

    /// On `token.expiring`: refresh (or ask the provider) and carry on with the new token, so the server never has to
    /// close the connection with `token.expired`.
    private func replaceExpiringToken() async {
        if let token = await self.session.tokenReplacing(expiring: self.currentToken, generation: self.target.generation) {
            await self.reauthenticate(with: token)
        }
    }

    /// On `claims.changed`: refresh at once (or ask the provider), whatever the token's age, and carry on with the new
    /// token, so the app does not wait for its expiry to see new claims.
    private func refreshForNewClaims() async {
        let current = await self.session.accessToken(of: self.target.generation) ?? self.currentToken
        if let token = await self.session.tokenReplacing(expiring: current, generation: self.target.generation) {
            await self.reauthenticate(with: token)
        }
    }

    private func outcome(ofClose code: UInt16?, expired: Bool, connected: Bool) async -> LiveConnectionOutcome {
        guard await self.session.isCurrent(self.target.generation) else { return .sessionChanged }
        switch code {
        case SessionEventCloseCode.tooManySockets: return .ended(.tooManyConnections)
        case SessionEventCloseCode.revoked:
            // Revoked without the frame that should come first: the session is over all the same.
            await self.session.endRevokedSession(generation: self.target.generation)
            self.output.yield(.sessionRevoked(nil))
            return .revoked
        case SessionEventCloseCode.expired: return .rejected(token: self.currentToken, connected: connected)
        default: return expired ? .rejected(token: self.currentToken, connected: connected) : .dropped(connected: connected, retryAfter: nil)
        }
    }

    /// What a failure to connect, or of a connection, means for the stream.
    static func outcome(of error: any Error, token: String, connected: Bool, now: Date) -> LiveConnectionOutcome {
        guard let error = error as? WebSocketTransportError else { return .dropped(connected: connected, retryAfter: nil) }
        switch (error.code, error.response?.status) {
        case (.unsupported, _): return .ended(.unsupported(error.description))
        case (.refused, 401): return .rejected(token: token, connected: connected)
        case (.refused, 429):
            let retryAfter = error.response.flatMap { RateLimitInfo(header: $0.header, now: now)?.retryAfter }
            return .dropped(connected: connected, retryAfter: retryAfter)
        case (.refused, let status?) where status >= 500: return .dropped(connected: connected, retryAfter: nil)
        case (.refused, let status?): return .ended(.refused(status: status))
        default: return .dropped(connected: connected, retryAfter: nil)
        }
    }
}

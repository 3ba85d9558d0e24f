import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// What the server says about this session as it happens, over a WebSocket to `GET /api/v1/events`.
    ///
    /// ```swift
    /// for await event in session.liveEvents() {
    ///     switch event {
    ///     case .budgetChanged(_, _, let remaining): model.remaining = remaining
    ///     case .sessionRevoked: showSignIn()          // already signed out here
    ///     default: break
    ///     }
    /// }
    /// ```
    ///
    /// The stream connects with the session's access token (refreshed first when it is about to expire) and keeps the
    /// connection going: after each refresh it sends the server the new token, and on ``LiveEvent/tokenExpiring(expiresAt:)``
    /// it refreshes first, so a live connection never meets an expired token. A dropped connection is made again after
    /// a jittered exponential backoff (``Configuration/liveEventsReconnect``, on the session's clock), announced by
    /// ``LiveEvent/reconnecting(after:)``; a 401 before the upgrade is answered by one refresh (or a forced provider call)
    /// and a new attempt, by the usual rules: a rejected refresh token ends the session. When another session begins
    /// here (a sign-in), the stream connects again with it.
    ///
    /// It ends, with one last event:
    /// - ``LiveEvent/sessionRevoked(_:)`` when the server revoked the session. The SDK has signed out here first
    ///   (``SignOutReason/revoked``, state `.signedOut(reason: .revoked)`): the tokens are gone and no request uses them again.
    /// - ``LiveEvent/ended(_:)`` when the session ended here or there is none (``LiveEventsEnd/signedOut``), the user has
    ///   too many live connections (close 4008: this one is not reconnected, so two of them never fight), the server
    ///   refused it, or the platform has no WebSockets (``URLSessionWebSocketTransport`` on Linux needs a libcurl with
    ///   WebSocket support).
    ///
    /// Stop iterating (or cancel the task that iterates) to close it. Each call opens a connection of its own; the server
    /// limits how many one user may have.
    public nonisolated func liveEvents() -> AsyncStream<LiveEvent> {
        let (stream, output) = AsyncStream<LiveEvent>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let task = Task {
            await self.runLiveEvents(into: output)
            output.finish()
        }
        output.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Connects, and connects again, until the stream ends or its consumer stops.
    private nonisolated func runLiveEvents(into output: AsyncStream<LiveEvent>.Continuation) async {
        let policy = self.configuration.liveEventsReconnect
        var rejected: String?
        var failures = 0
        while !Task.isCancelled {
            let outcome = await self.connectLiveEvents(replacing: rejected, into: output)
            rejected = nil
            switch outcome {
            case .revoked, .cancelled: return
            case .ended(let end):
                output.yield(.ended(end))
                return
            case .sessionChanged:
                failures = 0
                continue
            case .rejected(let token, let connected):
                rejected = token
                failures = connected ? 1 : failures + 1
                if failures == 1 { continue }  // the first rejection in a row: at once, with a new token
            case .dropped(let connected, _):
                failures = connected ? 1 : failures + 1
            }
            var delay = policy.delay(forAttempt: failures)
            if case .dropped(_, let retryAfter?) = outcome { delay = max(delay, retryAfter) }
            output.yield(.reconnecting(after: delay))
            do { try await self.clock.sleep(for: delay) } catch { return }
        }
    }

    /// One connection, from reading the token to its end.
    private nonisolated func connectLiveEvents(
        replacing rejected: String?, into output: AsyncStream<LiveEvent>.Continuation
    ) async -> LiveConnectionOutcome {
        // Subscribed before the token is read, so no refresh after it goes unseen.
        let sessionEvents = await self.events()
        let target: LiveEventsTarget
        do {
            target = try await self.liveEventsTarget(replacing: rejected)
        } catch {
            switch error {
            case LatchkeyError.notSignedIn, LatchkeyError.sessionExpired: return .ended(.signedOut)
            case let error as LatchkeyError where error.has(.notRefreshable): return .ended(.signedOut)
            case LatchkeyError.storeUnavailable(let problem): return .ended(.storeUnavailable(problem))
            case is CancellationError: return .cancelled
            default: return .dropped(connected: false, retryAfter: nil)
            }
        }
        do {
            let connection = try await self.webSocketTransport.connect(target.request)
            return await LiveEventsConnection(session: self, connection: connection, target: target, output: output).run(following: sessionEvents)
        } catch {
            if Task.isCancelled { return .cancelled }
            return LiveEventsConnection.outcome(of: error, token: target.token, connected: false, now: self.clock.now())
        }
    }
}

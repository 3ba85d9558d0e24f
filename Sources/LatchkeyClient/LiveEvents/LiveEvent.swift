import Foundation
import LatchkeyAPI

/// What the server said about this session over its live event stream, or what became of that stream
/// (``LatchkeySession/liveEvents()``). No case carries a token.
public enum LiveEvent: Sendable, Equatable {
    /// The stream is connected (again): events from now on arrive. Events sent while it was disconnected are lost; after a
    /// reconnect, reload what matters (the budget, the profile).
    case connected
    /// The connection dropped or was refused; the SDK connects again after `after` seconds (jittered exponential backoff,
    /// ``ReconnectPolicy``).
    case reconnecting(after: TimeInterval)
    /// The user's budget for the period changed: its limit, what is used of it, and what remains (in the budget's units;
    /// `nil` when the server did not say).
    case budgetChanged(limit: Double?, used: Double, remaining: Double?)
    /// An identity was linked to the user: `apple`, or a configured provider's name.
    case identityLinked(provider: String)
    /// The claims the user's access tokens carry changed (the app's backend set `app_metadata`, or asked for a refresh).
    /// The SDK has already refreshed the session when this arrives: ``LatchkeySession/accessToken()`` carries the new
    /// claims.
    case claimsChanged
    /// The connection's access token expires at `expiresAt` (the server warns a minute ahead). The SDK refreshes the
    /// session and carries on with the new token by itself.
    case tokenExpiring(expiresAt: Date)
    /// The server accepted the newer access token the SDK sent after a refresh; it expires at `expiresAt`.
    case reauthenticated(expiresAt: Date)
    /// The user was deleted; ``sessionRevoked(_:)`` with `SessionRevocationReason.deleted` follows.
    case userDeleted
    /// The server revoked the session (`nil`: a reason this SDK does not know). The SDK has already signed out here
    /// (``SignOutReason/revoked``): the tokens are gone and no request uses them again. The stream's last event.
    case sessionRevoked(SessionRevocationReason?)
    /// The server did not accept a frame the SDK sent (`code` such as `invalid_token` or `wrong_user`); the connection
    /// goes on.
    case serverError(code: String, message: String)
    /// The stream ended for another reason than a revocation; its last event.
    case ended(LiveEventsEnd)
}

/// Why a live event stream ended (``LiveEvent/ended(_:)``). It is not reconnected: call
/// ``LatchkeySession/liveEvents()`` again when it makes sense (after a sign-in, when the app comes to the foreground).
public enum LiveEventsEnd: Sendable, Equatable {
    /// The session ended here (signed out, expired, another user signed in), or there was none.
    case signedOut
    /// The server closed the connection because the user opened more live connections than it allows (close 4008) and
    /// this was the oldest. Not reconnected, so two of the user's streams never take turns closing each other.
    case tooManyConnections
    /// The server refused the connection with this HTTP status (not 401 or 429, which are retried), e.g. 404 from a
    /// server without the event stream.
    case refused(status: Int)
    /// This platform cannot open WebSockets; the text says why (on Linux: a libcurl without WebSocket support, see
    /// ``URLSessionWebSocketTransport``).
    case unsupported(String)
    /// The secure store could not be read.
    case storeUnavailable(StoreProblem)
}

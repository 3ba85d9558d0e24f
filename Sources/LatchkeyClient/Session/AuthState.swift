import Foundation
import LatchkeyAPI

/// Where the app stands, as ``LatchkeySession/authStates()`` and ``AuthModel`` report it.
public enum AuthState: Sendable, Equatable, CustomStringConvertible {
    /// Before ``LatchkeySession/bootstrap()`` has finished.
    case restoring
    /// No session: show the sign-in (or "continue as guest") screen. `reason` says why a session this app had ended
    /// (`nil` when there was none, as at a first launch): ``SignOutReason/sessionExpired`` when the refresh token was
    /// rejected or a token without refresh expired (say so, then sign in again), ``SignOutReason/revoked`` when the
    /// server revoked it and said so over ``LatchkeySession/liveEvents()``. This is the one spelling of a session's end.
    case signedOut(reason: SignOutReason? = nil)
    /// A session is in use.
    case signedIn(AuthSession)
    /// The secure store cannot be read right now: the session is not lost. With ``StoreProblem/locked`` bootstrap again
    /// when protected data becomes available (``LatchkeySession/handle(_:)`` does); the other problems need the app.
    case storeUnavailable(StoreProblem)

    /// Whether a session is in use.
    public var isSignedIn: Bool { if case .signedIn = self { true } else { false } }

    /// A short name; never a token.
    public var description: String {
        switch self {
        case .restoring: "restoring"
        case .signedOut(let reason): reason.map { "signed out (\($0.rawValue))" } ?? "signed out"
        case .signedIn(let session): "signed in (\(session))"
        case .storeUnavailable(let problem): "secure storage unavailable (\(problem.name))"
        }
    }
}

/// What the app may know about the current session: no token.
public struct AuthSession: Sendable, Equatable, CustomStringConvertible {
    /// The user ID; for device users the lowercase device UUID.
    public var userID: String
    /// What the session stands for.
    public var kind: SessionKind
    /// When the access token expires, by the SDK's clock (`nil` for tokens from an external provider).
    public var expiresAt: Date?
    /// How strongly the user was authenticated, from the access token's `aal` claim: `aal2`
    /// after a second factor (at sign-in, by ``LatchkeySession/stepUp(code:)``, or at the first refresh after
    /// ``LatchkeySession/confirmTOTP(factorID:code:)``), else `aal1`. `nil` when the token
    /// does not say (a server before second factors, a guest token, an external provider's token).
    public var aal: AuthenticatorAssuranceLevel?
    /// How the user proved who they are, from the access token's `amr` claim: `[.password, .otp]` after a password and
    /// a TOTP code, `[.device, .hardwareKey]` for a device session with a bound key. Empty when the token does not say.
    public var amr: [AuthenticationMethod]

    /// Creates a session description.
    public init(
        userID: String, kind: SessionKind, expiresAt: Date?, aal: AuthenticatorAssuranceLevel? = nil, amr: [AuthenticationMethod] = []
    ) {
        self.userID = userID
        self.kind = kind
        self.expiresAt = expiresAt
        self.aal = aal
        self.amr = amr
    }

    init(_ session: StoredSession) {
        let assurance = UnverifiedJWT.assurance(of: session.accessToken)
        self.init(
            userID: session.userID, kind: session.kind, expiresAt: session.accessTokenExpiresAt, aal: assurance?.aal, amr: assurance?.amr ?? [])
    }

    /// Kind and user.
    public var description: String { "\(self.kind.rawValue), user \(self.userID)" }
}

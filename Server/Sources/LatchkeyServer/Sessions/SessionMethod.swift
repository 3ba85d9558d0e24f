import LatchkeyAPI

/// How a session began, as its user sees it in `GET /api/v1/users/me/sessions` (`method`): `device`, `password`,
/// `apple`, `google`, `passkey`, `access_code`, `federated` (a provider's token, exchanged) or `email` (a mailed code).
///
/// Stored with each session (`sessions.method`); a session stored before it was is told by the first entry of its `amr`
/// (a second factor only ever follows the first).
enum SessionMethod {
    /// The method of a session whose `amr` is `amr`; an empty `amr` (a session older than `amr`) is a device's.
    static func of(amr: [AuthenticationMethod]) -> String {
        guard let first = amr.first else { return "device" }
        switch first {
        case .device: return "device"
        case .password: return "password"
        case .apple: return "apple"
        case .google: return "google"
        // A passkey sign-in: `hwk` (with `user` when the authenticator verified the person); a device's own key
        // comes second, after `device`.
        case .hardwareKey, .user: return "passkey"
        case .accessCode: return "access_code"
        case .federated: return "federated"
        case .email: return "email"
        default: return first.rawValue
        }
    }
}

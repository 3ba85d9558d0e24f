import LatchkeyAPI

extension SessionRevocationReason {
    /// The reason the event socket and webhooks give for a session revoked with `stored` (`sessions.revoked_reason`).
    init(stored: String?) {
        self =
            switch stored {
            case "logout": .logout
            case "logout_global", "logout_others", "password_changed", "password_reset": .logoutGlobal
            case "refresh_token_reuse": .reuseDetected
            case "disabled": .disabled
            case "deleted": .deleted
            default: .admin
            }
    }
}

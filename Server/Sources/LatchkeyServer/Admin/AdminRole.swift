/// What a console account may do; each role has everything of the one below it (owner ⊇ support ⊇ viewer).
///
/// - `viewer` reads every page and does nothing.
/// - `support` also acts on users: disable and enable, resend the verification mail, send a password reset, mark the
///   email verified, end sessions, set the budget, reset second factors, remove passkeys; and retries failed mail.
/// - `owner` also holds what reaches beyond one user's support case: signing keys, access codes (issuing one hands out
///   a way in as the user), deleting users (it cannot be undone), and admin accounts (from the command line).
///
/// Accounts made before roles existed are owners (migration 18); `latchkey admin create` makes `support` accounts
/// unless `--role` says otherwise.
package enum AdminRole: String, Sendable, CaseIterable, Comparable {
    case viewer
    case support
    case owner

    private var rank: Int {
        switch self {
        case .viewer: 0
        case .support: 1
        case .owner: 2
        }
    }

    package static func < (lhs: AdminRole, rhs: AdminRole) -> Bool { lhs.rank < rhs.rank }

    /// Whether this role has everything `role` has.
    package func includes(_ role: AdminRole) -> Bool { self >= role }
}

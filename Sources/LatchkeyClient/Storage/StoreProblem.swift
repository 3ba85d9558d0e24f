/// What is wrong with the secure store, as ``LatchkeyError/storeUnavailable(_:)`` and ``AuthState/storeUnavailable(_:)``
/// report it.
public enum StoreProblem: Sendable, Equatable, CustomStringConvertible {
    /// The Keychain is locked until the device is unlocked after a restart; it heals by itself (bootstrap again when
    /// protected data becomes available).
    case locked
    /// The stored bytes cannot be read as credentials; they are kept as they are, and the app decides (e.g.
    /// ``LatchkeySession/resetDeviceIdentity()``).
    case unreadable
    /// The app is not set up for the store: a missing entitlement, an access group not among its Keychain Sharing
    /// groups, no keychain at all. The text says which.
    case misconfigured(String)
    /// Any other failure of the store (an unexpected Keychain status, a file that cannot be written). The text says which.
    case failed(String)

    /// A short name (`locked`, `unreadable`, `misconfigured`, `failed`).
    public var name: String {
        switch self {
        case .locked: "locked"
        case .unreadable: "unreadable"
        case .misconfigured: "misconfigured"
        case .failed: "failed"
        }
    }

    /// A sentence a person can read.
    public var description: String {
        switch self {
        case .locked: ErrorMessages.text("store.locked")
        case .unreadable: ErrorMessages.text("store.unreadable")
        case .misconfigured(let reason): ErrorMessages.text("store.misconfigured", reason)
        case .failed(let reason): ErrorMessages.text("store.failed", reason)
        }
    }
}

import Foundation

/// What is wrong with a ``SecureStore`` that cannot be used, so an app can tell a state that heals by itself from one
/// it must act on. Never contains a token or secret.
public enum StoreProblem: Sendable, Equatable, CustomStringConvertible {
    /// The Keychain is locked: the device has not been unlocked since it started (`errSecInteractionNotAllowed`).
    /// It heals when the user unlocks the device; nothing was lost, so this is not "signed out".
    case locked
    /// The stored bytes cannot be read as credentials (damaged, or written by something else). They are kept as they
    /// are: whether to start a new device identity is the app's decision (``LatchkeySession/resetDeviceIdentity()``).
    case unreadable
    /// The app is set up so that the store cannot work, and retrying will not help: the Keychain access group is not
    /// among the app's entitlements, the app has no Keychain entitlement at all, no Keychain exists, or the credentials
    /// file's directory may not be written. The text says which.
    case misconfigured(String)
    /// Any other failure: another Keychain `OSStatus`, or a file that could not be read or written. The text says which.
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

    /// A sentence a person can read (from the SDK's string catalog, keys `store.*`).
    public var description: String {
        switch self {
        case .locked: ErrorMessages.text("store.locked")
        case .unreadable: ErrorMessages.text("store.unreadable")
        case .misconfigured(let reason): ErrorMessages.text("store.misconfigured", reason)
        case .failed(let reason): ErrorMessages.text("store.failed", reason)
        }
    }
}

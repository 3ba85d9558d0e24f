import LatchkeyAPI

extension WeakPasswordReason {
    /// What to do about it, as a sentence a person can read (``LatchkeyError/weakPassword(_:)``'s description).
    var advice: String {
        switch self {
        case .tooShort: "Use at least 8 characters."
        case .tooLong: "Use at most 256 characters."
        case .sameAsEmail: "Do not use your email address as your password."
        case .common: "It is one of the most common passwords: choose one that is harder to guess."
        default: "Choose a longer password that is harder to guess."
        }
    }
}

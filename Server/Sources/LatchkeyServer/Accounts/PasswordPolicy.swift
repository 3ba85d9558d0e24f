import Foundation
import LatchkeyAPI

/// NIST SP 800-63B's rules for passwords people choose: 8 to 256 characters after NFKC normalisation, not the
/// account's email address, not in the list of the most common passwords. No composition rules.
enum PasswordPolicy {
    static let minimumLength = 8
    static let maximumLength = 256

    /// The password as it is hashed: NFKC-normalised (so the same password typed on two keyboards is one password).
    static func normalize(_ password: String) -> String {
        password.precomposedStringWithCompatibilityMapping
    }

    /// Throws ``ServiceError/weakPassword(_:)`` for a normalised password that breaks a rule.
    static func check(_ normalized: String, email: EmailAddress?) throws(ServiceError) {
        let length = normalized.count
        if length < Self.minimumLength { throw .weakPassword(.tooShort) }
        if length > Self.maximumLength { throw .weakPassword(.tooLong) }
        if let email {
            let lowered = normalized.lowercased()
            if lowered == email.key || lowered == email.localPart.lowercased() { throw .weakPassword(.sameAsEmail) }
        }
        if CommonPasswords.contains(normalized) { throw .weakPassword(.common) }
    }
}

/// Why a registration or an assertion was refused.
///
/// Programs match ``reason``; ``detail`` is a sentence safe to return to a client and to log: it never holds bytes of
/// keys, signatures, challenges or credential IDs.
public struct WebAuthnFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, as a value programs can match; new reasons may be added.
    public struct Reason: Sendable, Hashable, RawRepresentable {
        /// The reason's name, such as `challengeMismatch`.
        public let rawValue: String

        /// The reason named `rawValue`.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// Bytes or JSON that are not what WebAuthn defines: undecodable, truncated, with parts missing or left over.
        public static let malformed = Self(rawValue: "malformed")
        /// Client data of the other ceremony (`webauthn.get` for a registration, or the reverse).
        public static let wrongType = Self(rawValue: "wrongType")
        /// Client data signed over another challenge than the one issued.
        public static let challengeMismatch = Self(rawValue: "challengeMismatch")
        /// Client data from an origin the relying party does not serve.
        public static let originNotAllowed = Self(rawValue: "originNotAllowed")
        /// Client data from a cross-origin iframe.
        public static let crossOrigin = Self(rawValue: "crossOrigin")
        /// Authenticator data for another RP ID.
        public static let rpIDMismatch = Self(rawValue: "rpIDMismatch")
        /// The authenticator did not see the user present.
        public static let userNotPresent = Self(rawValue: "userNotPresent")
        /// User verification was required and the authenticator did not verify the user.
        public static let userNotVerified = Self(rawValue: "userNotVerified")
        /// A credential public key of a type, curve or algorithm not supported, or with parameters missing or wrong.
        public static let unsupportedKey = Self(rawValue: "unsupportedKey")
        /// An attestation statement format other than `none` and `packed`.
        public static let unsupportedAttestation = Self(rawValue: "unsupportedAttestation")
        /// An attestation statement that does not verify.
        public static let badAttestation = Self(rawValue: "badAttestation")
        /// An assertion signature that does not verify with the credential's public key.
        public static let badSignature = Self(rawValue: "badSignature")
        /// A signature counter that did not increase: the credential may have been cloned.
        public static let signCountNotIncreasing = Self(rawValue: "signCountNotIncreasing")
    }

    /// What was wrong.
    public var reason: Reason
    /// A sentence about it, free of any bytes of the ceremony.
    public var detail: String

    /// A failure for `reason`, described by `detail`.
    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// The ``detail``.
    public var description: String { self.detail }
}

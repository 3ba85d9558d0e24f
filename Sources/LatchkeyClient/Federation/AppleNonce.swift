import Foundation

/// The nonce of one Sign in with Apple attempt: a random string and its SHA-256.
///
/// Apple puts the value of `ASAuthorizationAppleIDRequest.nonce` into the identity token's `nonce` claim; the
/// server checks that claim against the SHA-256 of the raw nonce the app sends, and accepts each nonce once. So:
/// put ``sha256`` in the Apple request, keep ``raw``, and send ``raw`` to Latchkey with
/// ``LatchkeySession/signInWithApple(identityToken:rawNonce:authorizationCode:linkingCurrentUser:)-(String,_,_,_)``.
///
/// ```swift
/// let nonce = AppleNonce.random()
/// let request = ASAuthorizationAppleIDProvider().createRequest()
/// request.nonce = nonce.sha256
/// // … after Apple answers:
/// try await session.signInWithApple(identityToken: token, rawNonce: nonce.raw)
/// ```
///
/// Make a new nonce for every attempt. Its description, debug description and mirror show neither value.
public struct AppleNonce: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The characters of a random nonce: letters, digits, `-` and `_` (URL-safe, 6 bits each).
    public static let characters = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_")

    /// The nonce itself: send it to Latchkey, never to Apple.
    public let raw: String
    /// The SHA-256 of ``raw``'s UTF-8 bytes, as 64 lowercase hexadecimal digits: put it in
    /// `ASAuthorizationAppleIDRequest.nonce`.
    public let sha256: String

    /// Wraps a nonce made elsewhere and computes its ``sha256``.
    public init(raw: String) {
        self.raw = raw
        self.sha256 = SHA256Hex.digest(raw)
    }

    /// A new nonce of `length` characters from ``characters``, drawn with `SystemRandomNumberGenerator`
    /// (the default 32 characters carry 192 random bits).
    ///
    /// - Precondition: `length` is greater than zero.
    public static func random(length: Int = 32) -> AppleNonce {
        precondition(length > 0, "A nonce needs at least one character.")
        var generator = SystemRandomNumberGenerator()
        let characters = (0..<length).map { _ in Self.characters[Int.random(in: 0..<Self.characters.count, using: &generator)] }
        return AppleNonce(raw: String(characters))
    }

    /// `AppleNonce(<redacted>)`: never the nonce or its hash.
    public var description: String { "AppleNonce(<redacted>)" }
    /// Same as ``description``.
    public var debugDescription: String { self.description }
    /// A mirror that shows only ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["nonce": self.description]) }
}

import Foundation

/// The checks of `clientDataJSON` (§7.1 steps 7–10, §7.2 steps 11–14): its type, challenge, origin and crossOrigin.
/// `topOrigin` and any other member are ignored.
enum ClientData {
    /// Client data is a couple of hundred bytes; more than this is not a browser's.
    static let maximumSize = 16_384

    private struct Members: Decodable {
        var type: String
        var challenge: String
        var origin: String
        var crossOrigin: Bool?
    }

    static func check(
        _ json: [UInt8],
        type: String,
        challenge: [UInt8],
        relyingParty: RelyingParty
    ) throws(WebAuthnFailure) {
        guard json.count <= Self.maximumSize else {
            throw WebAuthnFailure(.malformed, "The client data is longer than \(Self.maximumSize) bytes.")
        }
        let members: Members
        do {
            members = try JSONDecoder().decode(Members.self, from: Data(json))
        } catch {
            throw WebAuthnFailure(.malformed, "The client data is not a JSON object with a type, a challenge and an origin.")
        }
        guard members.type == type else {
            throw WebAuthnFailure(.wrongType, "The client data is of another ceremony than \(type).")
        }
        guard members.challenge.utf8.constantTimeEquals(Base64URL.encode(challenge).utf8) else {
            throw WebAuthnFailure(.challengeMismatch, "The client data is not for the challenge issued.")
        }
        guard relyingParty.origins.contains(members.origin) else {
            throw WebAuthnFailure(.originNotAllowed, "The client data's origin is not one of the relying party's.")
        }
        guard members.crossOrigin != true else {
            throw WebAuthnFailure(.crossOrigin, "The ceremony ran in a cross-origin frame.")
        }
    }
}

import Foundation

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// The client data hashes App Attest signs, as the server computes them (issue 34's pinned details).
enum AppAttestClientData {
    /// An attestation's: SHA-256 of the challenge's decoded bytes (not of its base64 text).
    static func attestation(challenge: Data) -> Data { Data(SHA256.hash(data: challenge)) }

    /// An assertion's: SHA-256 of the raw concatenation of the ASCII method, the ASCII API path (no host, no query, no
    /// prefix the server is mounted under), SHA-256 of the exact body bytes (of nothing when there is no body) and the
    /// challenge's decoded bytes; no separators.
    static func assertion(method: String, path: String, body: Data, challenge: Data) -> Data {
        var message = Data(method.utf8)
        message.append(Data(path.utf8))
        message.append(Data(SHA256.hash(data: body)))
        message.append(challenge)
        return Data(SHA256.hash(data: message))
    }
}

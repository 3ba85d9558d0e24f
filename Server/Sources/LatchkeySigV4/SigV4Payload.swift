import Crypto
import Foundation

/// The body of a request as a signature covers it: the last line of the canonical request, and the value of
/// `X-Amz-Content-Sha256` where that header is sent.
public enum SigV4Payload: Sendable, Hashable {
    /// The body itself; the signer hashes it (SHA-256).
    case data(Data)
    /// The SHA-256 of the body, already computed, as lowercase hex.
    case hash(String)
    /// `UNSIGNED-PAYLOAD`: the signature does not cover the body (S3 over HTTPS, and every presigned URL for S3).
    case unsigned

    /// An empty body (a `GET`, a `DELETE`).
    public static let empty = SigV4Payload.data(Data())

    /// The hex SHA-256 of an empty body.
    package static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// What the canonical request ends with: the body's hex SHA-256, or `UNSIGNED-PAYLOAD`.
    package var canonicalValue: String {
        switch self {
        case .data(let data): data.isEmpty ? Self.emptyHash : SHA256.hash(data: data).hexEncoded
        case .hash(let hash): hash.lowercased()
        case .unsigned: "UNSIGNED-PAYLOAD"
        }
    }
}

extension ContiguousBytes {
    /// Lowercase hexadecimal, two digits a byte, as SigV4 writes hashes and signatures.
    package var hexEncoded: String {
        self.withUnsafeBytes { bytes in
            String(unsafeUninitializedCapacity: bytes.count * 2) { text in
                let digits: StaticString = "0123456789abcdef"
                for (index, byte) in bytes.enumerated() {
                    text[2 * index] = digits.utf8Start[Int(byte >> 4)]
                    text[2 * index + 1] = digits.utf8Start[Int(byte & 0x0f)]
                }
                return bytes.count * 2
            }
        }
    }
}

import Foundation

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// This device's P-256 key: it proves to the server that a request comes from this device (DPoP, RFC 9449).
///
/// A device that registers with its key gets no device secret (nothing that travels, nothing to steal), signs in
/// again by proof, and its sessions are bound to the key: a refresh token copied off the device is refused without
/// it. On an iPhone or a Mac with a Secure Enclave the key lives there and its private part never leaves it (what is
/// stored is a blob only this device's Secure Enclave can use); elsewhere it is a CryptoKit (swift-crypto on Linux)
/// key kept in the ``SecureStore`` with the rest of the credentials.
///
/// Its description, debug description and mirror show the key's thumbprint only.
public struct DeviceKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Where the private key is.
    public enum Kind: String, Sendable, Equatable {
        /// A P-256 key in the secure store.
        case software = "p256"
        /// A key inside the Secure Enclave; the stored data is its encrypted handle.
        case secureEnclave = "secure-enclave"
    }

    /// Where the private key is.
    public let kind: Kind
    /// The key's stored form: the raw private key, or the Secure Enclave's handle.
    let data: Data

    /// A key from its stored form.
    public init(kind: Kind, data: Data) {
        self.kind = kind
        self.data = data
    }

    /// A new key: in the Secure Enclave when the device has one, else in software.
    public static func generate() -> DeviceKey {
        #if canImport(CryptoKit) && !os(Linux)
        if SecureEnclave.isAvailable, let key = try? SecureEnclave.P256.Signing.PrivateKey() {
            return DeviceKey(kind: .secureEnclave, data: key.dataRepresentation)
        }
        #endif
        return DeviceKey(kind: .software, data: P256.Signing.PrivateKey().rawRepresentation)
    }

    /// The public key.
    func publicKey() throws -> P256.Signing.PublicKey {
        switch self.kind {
        case .software: return try P256.Signing.PrivateKey(rawRepresentation: self.data).publicKey
        case .secureEnclave:
            #if canImport(CryptoKit) && !os(Linux)
            return try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: self.data).publicKey
            #else
            throw LatchkeyError.storeUnavailable(.misconfigured("this device key lives in a Secure Enclave this platform does not have"))
            #endif
        }
    }

    /// An ES256 signature (`r || s`, 64 bytes) of `message`.
    func sign(_ message: Data) throws -> Data {
        switch self.kind {
        case .software: return try P256.Signing.PrivateKey(rawRepresentation: self.data).signature(for: message).rawRepresentation
        case .secureEnclave:
            #if canImport(CryptoKit) && !os(Linux)
            return try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: self.data).signature(for: message).rawRepresentation
            #else
            throw LatchkeyError.storeUnavailable(.misconfigured("this device key lives in a Secure Enclave this platform does not have"))
            #endif
        }
    }

    /// The public key as a JWK (`kty`, `crv`, `x`, `y`).
    func publicJWK() throws -> [String: String] {
        let x963 = try self.publicKey().x963Representation
        return ["kty": "EC", "crv": "P-256", "x": Base64URL.encode(x963[1..<33]), "y": Base64URL.encode(x963[33..<65])]
    }

    /// The RFC 7638 thumbprint of the public key: what the server knows the device by.
    public var thumbprint: String {
        guard let jwk = try? self.publicJWK(), let x = jwk["x"], let y = jwk["y"] else { return "unreadable" }
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"#
        return Base64URL.encode(Data(SHA256.hash(data: Data(canonical.utf8))))
    }

    /// `DeviceKey(<kind>, <thumbprint>)`: never the private key.
    public var description: String { "DeviceKey(\(self.kind.rawValue), \(self.thumbprint))" }
    /// Same as ``description``.
    public var debugDescription: String { self.description }
    /// A mirror that shows only ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["key": self.description]) }
}

import Crypto
import Foundation

/// The key that seals signing keys at rest and derives the server's other secrets.
///
/// From configuration (`LATCHKEY_MASTER_KEY`, base64 of 32 bytes) or else a key file created beside
/// the database with mode 0600. Every process sharing a database must use the same master key.
@available(LatchkeyServer 1.0, *)
struct MasterKey: Sendable {
    let key: SymmetricKey

    enum LoadError: Error, CustomStringConvertible {
        case malformed
        case unreadableFile(String)

        var description: String {
            switch self {
            case .malformed: "the master key must be base64 of exactly 32 bytes"
            case .unreadableFile(let path): "cannot read or create the master key file at \(path)"
            }
        }
    }

    init(key: SymmetricKey) { self.key = key }

    /// Decodes a configured master key.
    init(base64: String) throws {
        guard let data = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)), data.count == 32 else {
            throw LoadError.malformed
        }
        self.key = SymmetricKey(data: data)
    }

    /// Reads the key file at `path`, creating it with a fresh key and mode 0600 when missing.
    static func loadOrCreate(filePath path: String) throws -> MasterKey {
        let manager = FileManager.default
        if manager.fileExists(atPath: path) {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw LoadError.unreadableFile(path) }
            return try MasterKey(base64: text)
        }
        let key = SymmetricKey(size: .bits256)
        let text = key.withUnsafeBytes { Data($0).base64EncodedString() } + "\n"
        guard manager.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw LoadError.unreadableFile(path)
        }
        return MasterKey(key: key)
    }

    /// The default key file for an SQLite database file.
    static func defaultFilePath(forDatabase database: String) -> String { database + ".key" }

    /// Encrypts `plaintext`, bound to `context`, as base64 text.
    func seal(_ plaintext: Data, context: String) throws -> String {
        try AES.GCM.seal(plaintext, using: self.key, authenticating: Data(context.utf8)).combined!.base64EncodedString()
    }

    /// Decrypts what ``seal(_:context:)`` produced with the same context.
    func open(_ sealed: String, context: String) throws -> Data {
        guard let combined = Data(base64Encoded: sealed) else { throw LoadError.malformed }
        return try AES.GCM.open(AES.GCM.SealedBox(combined: combined), using: self.key, authenticating: Data(context.utf8))
    }

    /// A key for one purpose, derived so that no two purposes share key material.
    func derivedKey(purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: self.key, info: Data("latchkey \(purpose)".utf8), outputByteCount: 32)
    }
}

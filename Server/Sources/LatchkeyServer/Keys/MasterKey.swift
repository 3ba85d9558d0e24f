import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The key that seals signing keys at rest and derives the server's other secrets.
///
/// From configuration (`LATCHKEY_MASTER_KEY`, base64 of 32 bytes) or else a key file created beside
/// the database with mode 0600. Every process sharing a database must use the same master key.
struct MasterKey: Sendable {
    let key: SymmetricKey

    enum LoadError: Error, CustomStringConvertible {
        case malformed
        case unreadableFile(String)
        /// The key file can be read by other users (group or world permission bits).
        case exposedFile(String, mode: UInt32)

        var description: String {
            switch self {
            case .malformed: "the master key must be base64 of exactly 32 bytes"
            case .unreadableFile(let path): "cannot read or create the master key file at \(path)"
            case .exposedFile(let path, let mode):
                "the master key file \(path) is readable by other users (mode \(String(mode, radix: 8))): make it private with chmod 600"
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

    /// Reads the key file at `path`, creating it with a fresh key when missing.
    ///
    /// The file is created with mode 0600 by `open(O_CREAT | O_EXCL)` itself, so it is never readable by others, not
    /// even for an instant, and two processes starting at once cannot both write one. An existing file that others
    /// can read is refused: the key in it must be taken as known.
    static func loadOrCreate(filePath path: String) throws -> MasterKey {
        let key = SymmetricKey(size: .bits256)
        let text = key.withUnsafeBytes { Data($0).base64EncodedString() } + "\n"
        let descriptor = createExclusively(path, mode: 0o600)
        guard descriptor >= 0 else {
            guard errno == EEXIST else { throw LoadError.unreadableFile(path) }
            return try Self.load(filePath: path)
        }
        let written = text.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == text.utf8.count, synced else {
            unlink(path)
            throw LoadError.unreadableFile(path)
        }
        return MasterKey(key: key)
    }

    private static func load(filePath path: String) throws -> MasterKey {
        guard let permissions = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int else {
            throw LoadError.unreadableFile(path)
        }
        let mode = UInt32(permissions) & 0o777
        guard mode & 0o077 == 0 else { throw LoadError.exposedFile(path, mode: mode) }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw LoadError.unreadableFile(path) }
        return try MasterKey(base64: text)
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

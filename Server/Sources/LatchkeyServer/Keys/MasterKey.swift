import Crypto
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The key that seals signing keys at rest and derives the server's other secrets.
///
/// From configuration (`LATCHKEY_MASTER_KEY`, base64 of 32 bytes) or else a key file created beside
/// the database with mode 0600. Every process sharing a database must use the same master key.
///
/// A key read from a file follows the file: when `latchkey keys rotate-master` has re-sealed every secret under a new
/// key and written it there, a value that the key in memory cannot open makes it read the file again (so does
/// ``followFile()``, at every signing-key reload) and take the new key, keeping the old one for opening what was sealed
/// with it meanwhile. Copies share that state.
struct MasterKey: Sendable {
    private final class State: Sendable {
        struct Keys {
            var current: SymmetricKey
            var previous: [SymmetricKey] = []
            var modified: Date?
        }
        let file: String?
        let keys: Mutex<Keys>
        init(_ key: SymmetricKey, file: String?, modified: Date?) {
            self.file = file
            self.keys = Mutex(Keys(current: key, modified: modified))
        }
    }

    private let state: State

    /// The key that seals (and derives the server's other secrets).
    var key: SymmetricKey { self.state.keys.withLock { $0.current } }

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

    init(key: SymmetricKey) { self.state = State(key, file: nil, modified: nil) }

    private init(key: SymmetricKey, file: String) {
        self.state = State(key, file: file, modified: Self.modified(file))
    }

    /// Decodes a configured master key.
    init(base64: String) throws { self.init(key: try Self.decode(base64)) }

    /// Base64 of exactly 32 bytes (surrounding whitespace ignored), as a key.
    private static func decode(_ base64: String) throws -> SymmetricKey {
        guard let data = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)), data.count == 32 else {
            throw LoadError.malformed
        }
        return SymmetricKey(data: data)
    }

    /// Reads the key file at `path`, creating it with a fresh key when missing.
    ///
    /// The file is created with mode 0600 by `open(O_CREAT | O_EXCL)` itself, so it is never readable by others, not
    /// even for an instant, and two processes starting at once cannot both write one. An existing file that others
    /// can read is refused: the key in it must be taken as known.
    static func loadOrCreate(filePath path: String) throws -> MasterKey {
        let key = SymmetricKey(size: .bits256)
        guard writeExclusively(path, MasterKey(key: key).base64 + "\n", mode: 0o600) else {
            guard errno == EEXIST else { throw LoadError.unreadableFile(path) }
            return try Self.load(filePath: path)
        }
        return MasterKey(key: key, file: path)
    }

    private static func load(filePath path: String) throws -> MasterKey {
        guard let permissions = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int else {
            throw LoadError.unreadableFile(path)
        }
        let mode = UInt32(permissions) & 0o777
        guard mode & 0o077 == 0 else { throw LoadError.exposedFile(path, mode: mode) }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw LoadError.unreadableFile(path) }
        return MasterKey(key: try Self.decode(text), file: path)
    }

    /// The key file's modification time.
    private static func modified(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    /// Reads the key file again when it changed since it was read: a new key in it seals from now on, and the one
    /// before still opens. True when the key changed.
    @discardableResult
    func followFile() -> Bool {
        guard let file = self.state.file else { return false }
        let modified = Self.modified(file)
        guard modified != self.state.keys.withLock({ $0.modified }) else { return false }
        guard let fresh = try? Self.load(filePath: file).key else { return false }
        return self.state.keys.withLock { keys in
            keys.modified = modified
            guard !Self.same(fresh, keys.current) else { return false }
            keys.previous.insert(keys.current, at: 0)
            keys.current = fresh
            return true
        }
    }

    /// Whether this holds the same current key as `other`.
    func isSame(as other: MasterKey) -> Bool { Self.same(self.key, other.key) }

    private static func same(_ a: SymmetricKey, _ b: SymmetricKey) -> Bool {
        a.withUnsafeBytes { a in b.withUnsafeBytes { b in a.elementsEqual(b) } }
    }

    /// Base64 of the current key, for a key file.
    var base64: String { self.key.withUnsafeBytes { Data($0).base64EncodedString() } }

    /// The default key file for an SQLite database file.
    static func defaultFilePath(forDatabase database: String) -> String { database + ".key" }

    /// Encrypts `plaintext`, bound to `context`, as base64 text.
    func seal(_ plaintext: Data, context: String) throws -> String {
        try AES.GCM.seal(plaintext, using: self.key, authenticating: Data(context.utf8)).combined!.base64EncodedString()
    }

    /// Decrypts what ``seal(_:context:)`` produced with the same context: with the current key, a key it replaced, or
    /// — when the key file changed — the key now in the file.
    func open(_ sealed: String, context: String) throws -> Data {
        guard let combined = Data(base64Encoded: sealed) else { throw LoadError.malformed }
        let box = try AES.GCM.SealedBox(combined: combined)
        let authenticated = Data(context.utf8)
        func attempt() -> Data? {
            let keys = self.state.keys.withLock { [$0.current] + $0.previous }
            for key in keys { if let opened = try? AES.GCM.open(box, using: key, authenticating: authenticated) { return opened } }
            return nil
        }
        if let opened = attempt() { return opened }
        if self.followFile(), let opened = attempt() { return opened }
        return try AES.GCM.open(box, using: self.key, authenticating: authenticated)
    }

    /// A key for one purpose, derived so that no two purposes share key material.
    func derivedKey(purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: self.key, info: Data("latchkey \(purpose)".utf8), outputByteCount: 32)
    }
}

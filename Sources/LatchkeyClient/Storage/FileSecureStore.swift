import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``SecureStore`` in one file, for Linux and command-line apps.
///
/// The file is created with mode 0600 inside a directory created with mode 0700, written to a temporary file
/// and renamed over the old one (a crash leaves the old or the new credentials, never half of each), and uses the
/// versioned ``CredentialsFormat``. ``update(_:)`` holds an exclusive `flock` on a lock file beside it across its read
/// and write, so two processes never interleave them. A directory the process may not write (permission, a read-only
/// volume) is ``StoreProblem/misconfigured(_:)``; other I/O failures are ``StoreProblem/failed(_:)``, with the system's
/// reason.
public struct FileSecureStore: SecureStore {
    /// The credentials file.
    public let fileURL: URL

    /// Stores credentials in `fileURL`.
    public init(fileURL: URL) { self.fileURL = fileURL }

    /// Stores credentials in `credentials.json` inside `directory`.
    public init(directory: URL) { self.fileURL = directory.appendingPathComponent("credentials.json") }

    /// Reads the file; `nil` when it does not exist.
    public func load() throws -> StoredCredentials? {
        guard FileManager.default.fileExists(atPath: self.fileURL.path) else { return nil }
        let data: Data
        do { data = try Data(contentsOf: self.fileURL) } catch { throw Self.failure("cannot read \(self.fileURL.lastPathComponent)", error) }
        return try CredentialsFormat.decode(data)
    }

    /// Reads and replaces the file while holding an exclusive lock on `<file>.lock` (other processes' updates wait).
    public func update(_ change: (StoredCredentials?) throws -> StoredCredentials?) throws {
        let directory = try self.createDirectory()
        let lockPath = directory.appendingPathComponent(".\(self.fileURL.lastPathComponent).lock").path
        let descriptor = open(lockPath, O_RDWR | O_CREAT, 0o600)
        guard descriptor >= 0 else { throw Self.failure("cannot create a lock file in \(directory.path)", errno: errno) }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else { throw Self.failure("cannot lock \(self.fileURL.lastPathComponent)", errno: errno) }
        defer { flock(descriptor, LOCK_UN) }
        if let next = try change(try self.load()) { try self.save(next) }
    }

    /// Writes `credentials` atomically with mode 0600.
    public func save(_ credentials: StoredCredentials) throws {
        let directory = try self.createDirectory()
        let data = try CredentialsFormat.encode(credentials)
        let temporaryPath = directory.appendingPathComponent(".\(self.fileURL.lastPathComponent).\(UUID().uuidString).tmp").path
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw Self.failure("cannot create a file in \(directory.path)", errno: errno) }
        let written = data.withUnsafeBytes { buffer in write(descriptor, buffer.baseAddress, buffer.count) }
        var failure = written == data.count ? 0 : (written < 0 ? errno : ENOSPC)
        if failure == 0, fsync(descriptor) != 0 { failure = errno }
        close(descriptor)
        if failure == 0, rename(temporaryPath, self.fileURL.path) != 0 { failure = errno }
        guard failure == 0 else {
            unlink(temporaryPath)
            throw Self.failure("cannot write \(self.fileURL.lastPathComponent)", errno: failure)
        }
    }

    private func createDirectory() throws -> URL {
        let directory = self.fileURL.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch { throw Self.failure("cannot create \(directory.path)", error) }
        return directory
    }

    /// Deletes the file.
    public func removeAll() throws {
        guard FileManager.default.fileExists(atPath: self.fileURL.path) else { return }
        do { try FileManager.default.removeItem(at: self.fileURL) } catch {
            throw Self.failure("cannot delete \(self.fileURL.lastPathComponent)", error)
        }
    }

    /// `misconfigured` when the system refused for want of permission or on a read-only volume, `failed` otherwise.
    static func failure(_ action: String, errno code: Int32) -> SecureStoreError {
        let reason = "\(action): \(String(cString: strerror(code)))"
        return [EACCES, EPERM, EROFS].contains(code) ? .misconfigured(reason) : .failed(reason)
    }

    /// The same for an error Foundation threw.
    static func failure(_ action: String, _ error: any Error) -> SecureStoreError {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let posix = underlying, posix.domain == NSPOSIXErrorDomain { return Self.failure(action, errno: Int32(posix.code)) }
        switch (error as? CocoaError)?.code {
        case .fileReadNoPermission?, .fileWriteNoPermission?, .fileWriteVolumeReadOnly?: return .misconfigured(action)
        default: return .failed(action)
        }
    }
}

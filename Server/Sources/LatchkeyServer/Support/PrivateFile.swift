#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// `open(path, O_WRONLY | O_CREAT | O_EXCL, mode)`: creates the file with `mode` from the first instant, or fails
/// (`EEXIST`) when it exists. The master key file and a new SQLite database are created this way, mode 0600.
func createExclusively(_ path: String, mode: mode_t) -> Int32 {
    #if canImport(Glibc)
    Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL, mode)
    #else
    Darwin.open(path, O_WRONLY | O_CREAT | O_EXCL, mode)
    #endif
}

/// Creates an empty file with `mode` unless a file is at `path` already.
func createEmptyUnlessPresent(_ path: String, mode: mode_t) {
    let descriptor = createExclusively(path, mode: mode)
    if descriptor >= 0 { close(descriptor) }
}

/// Writes `text` to a new file at `path`, created with `mode` from the first instant, and syncs it; false (and no file
/// left) when the file exists (`errno` is then `EEXIST`) or cannot be written.
func writeExclusively(_ path: String, _ text: String, mode: mode_t) -> Bool {
    let descriptor = createExclusively(path, mode: mode)
    guard descriptor >= 0 else { return false }
    let written = text.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) } == text.utf8.count
    let synced = fsync(descriptor) == 0
    close(descriptor)
    if !(written && synced) { unlink(path) }
    return written && synced
}

/// The reason of the last failed system call (`strerror(errno)`).
func lastSystemError() -> String { String(cString: strerror(errno)) }

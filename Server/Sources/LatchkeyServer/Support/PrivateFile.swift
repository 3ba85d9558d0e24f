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

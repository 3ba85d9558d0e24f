#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Overwrites `byteCount` bytes at `pointer` with zeros in a way the optimiser may not drop as a dead store
/// (the memory is freed right after, which would otherwise let it remove a plain `memset`).
func secureZero(_ pointer: UnsafeMutableRawPointer, byteCount: Int) {
    #if canImport(Darwin)
    _ = memset_s(pointer, byteCount, 0, byteCount)
    #else
    explicit_bzero(pointer, byteCount)
    #endif
}

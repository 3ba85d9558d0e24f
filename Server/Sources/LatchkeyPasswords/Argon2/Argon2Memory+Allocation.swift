#if canImport(Glibc)
import Glibc
#endif

/// Where the matrix lives. On Linux: its own anonymous mapping with transparent huge pages requested, since touching
/// tens of MiB of fresh 4 KiB pages costs one page fault each (about a third of a 46 MiB hash); elsewhere: malloc.
enum Argon2Allocation {
    #if os(Linux)
    private static let hugePageSize = 2 << 20

    static func allocate(words: Int) -> UnsafeMutablePointer<UInt64> {
        let byteCount = Self.mappedByteCount(words: words)
        guard let mapping = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), mapping != MAP_FAILED
        else { fatalError("Argon2 could not map \(byteCount) bytes: \(String(cString: strerror(errno)))") }
        // Advice only: without huge pages the mapping still works.
        _ = madvise(mapping, byteCount, Int32(MADV_HUGEPAGE))
        return mapping.bindMemory(to: UInt64.self, capacity: words)
    }

    static func deallocate(_ pointer: UnsafeMutablePointer<UInt64>, words: Int) {
        munmap(pointer, Self.mappedByteCount(words: words))
    }

    private static func mappedByteCount(words: Int) -> Int {
        (words * 8 + Self.hugePageSize - 1) / Self.hugePageSize * Self.hugePageSize
    }
    #else
    static func allocate(words: Int) -> UnsafeMutablePointer<UInt64> { .allocate(capacity: words) }

    static func deallocate(_ pointer: UnsafeMutablePointer<UInt64>, words: Int) { pointer.deallocate() }
    #endif
}

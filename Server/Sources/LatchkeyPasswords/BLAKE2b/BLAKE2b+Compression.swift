extension BLAKE2b {
    static let initializationVector: [UInt64] = [
        0x6a09_e667_f3bc_c908, 0xbb67_ae85_84ca_a73b, 0x3c6e_f372_fe94_f82b, 0xa54f_f53a_5f1d_36f1,
        0x510e_527f_ade6_82d1, 0x9b05_688c_2b3e_6c1f, 0x1f83_d9ab_fb41_bd6b, 0x5be0_cd19_137e_2179,
    ]

    /// The message schedule SIGMA (RFC 7693 §2.7); rounds 10 and 11 reuse rows 0 and 1.
    private static let messageSchedule: [Int] = [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
        14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3,
        11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4,
        7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8,
        9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13,
        2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9,
        12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11,
        13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10,
        6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5,
        10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0,
    ]

    /// The compression function F (RFC 7693 §3.2) on one 128-byte block.
    static func compress(
        chainValue h: UnsafeMutablePointer<UInt64>,
        block: UnsafeRawBufferPointer,
        counter: (low: UInt64, high: UInt64),
        isLast: Bool
    ) {
        let scratch = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: 32)
        defer { scratch.deallocate() }
        do {
            let v = scratch.baseAddress!
            let m = v + 16
            for i in 0..<16 {
                m[i] = UInt64(littleEndian: block.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self))
            }
            for i in 0..<8 {
                v[i] = h[i]
                v[i + 8] = Self.initializationVector[i]
            }
            v[12] ^= counter.low
            v[13] ^= counter.high
            if isLast { v[14] = ~v[14] }
            Self.messageSchedule.withUnsafeBufferPointer { schedule in
                for round in 0..<12 {
                    let s = schedule.baseAddress! + 16 * (round % 10)
                    mix(v, 0, 4, 8, 12, m[s[0]], m[s[1]])
                    mix(v, 1, 5, 9, 13, m[s[2]], m[s[3]])
                    mix(v, 2, 6, 10, 14, m[s[4]], m[s[5]])
                    mix(v, 3, 7, 11, 15, m[s[6]], m[s[7]])
                    mix(v, 0, 5, 10, 15, m[s[8]], m[s[9]])
                    mix(v, 1, 6, 11, 12, m[s[10]], m[s[11]])
                    mix(v, 2, 7, 8, 13, m[s[12]], m[s[13]])
                    mix(v, 3, 4, 9, 14, m[s[14]], m[s[15]])
                }
            }
            for i in 0..<8 {
                h[i] ^= v[i] ^ v[i + 8]
            }
            // The message words may be secret (a key or a password block).
            scratch.initialize(repeating: 0)
        }
    }

    /// The mixing function G (RFC 7693 §3.1).
    @inline(__always)
    private static func mix(_ v: UnsafeMutablePointer<UInt64>, _ a: Int, _ b: Int, _ c: Int, _ d: Int, _ x: UInt64, _ y: UInt64) {
        v[a] = v[a] &+ v[b] &+ x
        v[d] = (v[d] ^ v[a]).rotatedRight(by: 32)
        v[c] = v[c] &+ v[d]
        v[b] = (v[b] ^ v[c]).rotatedRight(by: 24)
        v[a] = v[a] &+ v[b] &+ y
        v[d] = (v[d] ^ v[a]).rotatedRight(by: 16)
        v[c] = v[c] &+ v[d]
        v[b] = (v[b] ^ v[c]).rotatedRight(by: 63)
    }
}

extension UInt64 {
    /// The bits rotated `count` places towards the least significant end (`count` is 1…63).
    @inline(__always)
    func rotatedRight(by count: UInt64) -> UInt64 {
        (self &>> count) | (self &<< (64 &- count))
    }
}

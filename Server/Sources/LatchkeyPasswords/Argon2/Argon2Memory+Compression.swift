extension Argon2Memory {
    /// The compression function G (RFC 9106 §3.5): `next = P(previous ⊕ reference) ⊕ previous ⊕ reference`,
    /// XORed into `next`'s old contents after the first pass (version 0x13).
    ///
    /// P runs on the block's eight rows of 16 words and then on its eight columns of word pairs; the first XOR is
    /// folded into the row pass and the last into the column pass, so each block is read and written once.
    /// `into` may be `reference` (address generation); `scratch` holds one block and must not overlap the others.
    @inline(__always)
    static func compress(
        previous: UnsafePointer<UInt64>,
        reference: UnsafePointer<UInt64>,
        into next: UnsafeMutablePointer<UInt64>,
        scratch: UnsafeMutablePointer<UInt64>,
        xorsIntoNext: Bool
    ) {
        let previous = UnsafeRawPointer(previous)
        let reference = UnsafeRawPointer(reference)
        let next = UnsafeMutableRawPointer(next)
        let scratch = UnsafeMutableRawPointer(scratch)
        // A row is 128 contiguous bytes; a column is 16-byte pairs 128 bytes apart.
        for row in 0..<8 {
            let offset = 128 * row
            var words = SixteenWords(loading: previous + offset, stride: 16) ^ SixteenWords(loading: reference + offset, stride: 16)
            if xorsIntoNext {
                (words ^ SixteenWords(loading: next + offset, stride: 16)).store(to: next + offset, stride: 16)
            } else {
                words.store(to: next + offset, stride: 16)
            }
            words.permute()
            words.store(to: scratch + offset, stride: 16)
        }
        for column in 0..<8 {
            let offset = 16 * column
            var words = SixteenWords(loading: scratch + offset, stride: 128)
            words.permute()
            (words ^ SixteenWords(loading: next + offset, stride: 128)).store(to: next + offset, stride: 128)
        }
    }
}

/// Sixteen words v0…v15 as eight pairs (v0, v1), (v2, v3), …, so that P runs two GB at a time in SSE2 or NEON
/// registers.
struct SixteenWords {
    typealias Pair = SIMD2<UInt64>

    var a0: Pair, a1: Pair, b0: Pair, b1: Pair, c0: Pair, c1: Pair, d0: Pair, d1: Pair

    /// Loads the eight pairs at byte offsets 0, stride, …, 7 × stride.
    @inline(__always)
    init(loading p: UnsafeRawPointer, stride s: Int) {
        (self.a0, self.a1) = (p.loadUnaligned(as: Pair.self), p.loadUnaligned(fromByteOffset: s, as: Pair.self))
        (self.b0, self.b1) = (p.loadUnaligned(fromByteOffset: 2 * s, as: Pair.self), p.loadUnaligned(fromByteOffset: 3 * s, as: Pair.self))
        (self.c0, self.c1) = (p.loadUnaligned(fromByteOffset: 4 * s, as: Pair.self), p.loadUnaligned(fromByteOffset: 5 * s, as: Pair.self))
        (self.d0, self.d1) = (p.loadUnaligned(fromByteOffset: 6 * s, as: Pair.self), p.loadUnaligned(fromByteOffset: 7 * s, as: Pair.self))
    }

    @inline(__always)
    init(_ a0: Pair, _ a1: Pair, _ b0: Pair, _ b1: Pair, _ c0: Pair, _ c1: Pair, _ d0: Pair, _ d1: Pair) {
        (self.a0, self.a1, self.b0, self.b1, self.c0, self.c1, self.d0, self.d1) = (a0, a1, b0, b1, c0, c1, d0, d1)
    }

    /// Stores the eight pairs at byte offsets 0, stride, …, 7 × stride.
    @inline(__always)
    func store(to p: UnsafeMutableRawPointer, stride s: Int) {
        p.storeBytes(of: self.a0, as: Pair.self)
        p.storeBytes(of: self.a1, toByteOffset: s, as: Pair.self)
        p.storeBytes(of: self.b0, toByteOffset: 2 * s, as: Pair.self)
        p.storeBytes(of: self.b1, toByteOffset: 3 * s, as: Pair.self)
        p.storeBytes(of: self.c0, toByteOffset: 4 * s, as: Pair.self)
        p.storeBytes(of: self.c1, toByteOffset: 5 * s, as: Pair.self)
        p.storeBytes(of: self.d0, toByteOffset: 6 * s, as: Pair.self)
        p.storeBytes(of: self.d1, toByteOffset: 7 * s, as: Pair.self)
    }

    @inline(__always)
    static func ^ (lhs: SixteenWords, rhs: SixteenWords) -> SixteenWords {
        SixteenWords(
            lhs.a0 ^ rhs.a0,
            lhs.a1 ^ rhs.a1,
            lhs.b0 ^ rhs.b0,
            lhs.b1 ^ rhs.b1,
            lhs.c0 ^ rhs.c0,
            lhs.c1 ^ rhs.c1,
            lhs.d0 ^ rhs.d0,
            lhs.d1 ^ rhs.d1
        )
    }

    /// The permutation P (RFC 9106 §3.6): BLAKE2b's round without message words, with BlaMka's multiplications.
    @inline(__always)
    mutating func permute() {
        // Columns: GB(v0, v4, v8, v12) with GB(v1, v5, v9, v13), and GB(v2, v6, v10, v14) with GB(v3, v7, v11, v15).
        Self.mix(&self.a0, &self.b0, &self.c0, &self.d0)
        Self.mix(&self.a1, &self.b1, &self.c1, &self.d1)
        // Diagonals: rotate b, c and d by one, two and three words so GB(v0, v5, v10, v15) and the others line up.
        (self.b0, self.b1) = (Pair(self.b0[1], self.b1[0]), Pair(self.b1[1], self.b0[0]))
        (self.c0, self.c1) = (self.c1, self.c0)
        (self.d0, self.d1) = (Pair(self.d1[1], self.d0[0]), Pair(self.d0[1], self.d1[0]))
        Self.mix(&self.a0, &self.b0, &self.c0, &self.d0)
        Self.mix(&self.a1, &self.b1, &self.c1, &self.d1)
        (self.b0, self.b1) = (Pair(self.b1[1], self.b0[0]), Pair(self.b0[1], self.b1[0]))
        (self.c0, self.c1) = (self.c1, self.c0)
        (self.d0, self.d1) = (Pair(self.d0[1], self.d1[0]), Pair(self.d1[1], self.d0[0]))
    }

    /// GB on two lanes at once (RFC 9106 §3.6).
    @inline(__always)
    private static func mix(_ a: inout Pair, _ b: inout Pair, _ c: inout Pair, _ d: inout Pair) {
        a = blaMka(a, b)
        d = rotatedRight32(d ^ a)
        c = blaMka(c, d)
        b = rotatedRight24(b ^ c)
        a = blaMka(a, b)
        d = rotatedRight16(d ^ a)
        c = blaMka(c, d)
        b = rotatedRight63(b ^ c)
    }

    /// `x + y + 2 · lo32(x) · lo32(y)`, modulo 2^64.
    @inline(__always)
    private static func blaMka(_ x: Pair, _ y: Pair) -> Pair {
        let low = Pair(repeating: 0xFFFF_FFFF)
        let product = (x & low) &* (y & low)
        return x &+ y &+ product &+ product
    }

    // The rotations are lane shuffles (and shifts for 63): written as `(x >> n) | (x << 64 - n)`, LLVM compiled each one to
    // scalar `rol`s with moves in and out of the vector registers on SSE2 (x86-64's baseline), a quarter of the hash's time.

    @inline(__always)
    private static func rotatedRight32(_ x: Pair) -> Pair {
        let halves = unsafeBitCast(x, to: SIMD4<UInt32>.self)
        return unsafeBitCast(SIMD4(halves[1], halves[0], halves[3], halves[2]), to: Pair.self)
    }

    // The shuffle reads best as the two 8-byte lanes it rotates.
    // swift-format-ignore
    @inline(__always)
    private static func rotatedRight24(_ x: Pair) -> Pair {
        let bytes = unsafeBitCast(x, to: SIMD16<UInt8>.self)
        return unsafeBitCast(
            SIMD16(
                bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[0], bytes[1], bytes[2],
                bytes[11], bytes[12], bytes[13], bytes[14], bytes[15], bytes[8], bytes[9], bytes[10]),
            to: Pair.self)
    }

    @inline(__always)
    private static func rotatedRight16(_ x: Pair) -> Pair {
        let words = unsafeBitCast(x, to: SIMD8<UInt16>.self)
        return unsafeBitCast(SIMD8(words[1], words[2], words[3], words[0], words[5], words[6], words[7], words[4]), to: Pair.self)
    }

    @inline(__always)
    private static func rotatedRight63(_ x: Pair) -> Pair {
        (x &>> 63) | (x &+ x)
    }
}

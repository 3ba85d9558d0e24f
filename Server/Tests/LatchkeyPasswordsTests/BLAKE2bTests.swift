import LatchkeyPasswords
import Testing

struct BLAKE2bTests {
    @Test func rfc7693AppendixAVector() {
        #expect(
            Hex.string(BLAKE2b.hash(Array("abc".utf8)))
                == "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
                + "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
        )
    }

    /// From BLAKE2's official `testvectors/blake2-kat.json`: key 00…3f, message 00…(n-1), 64-byte digest.
    static let keyedVectors: [(length: Int, digest: String)] = [
        (0, "10ebb67700b1868efb4417987acf4690ae9d972fb7a590c2f02871799aaa4786b5e996e8f0f4eb981fc214b005f42d2ff4233499391653df7aefcbc13fc51568"),
        (1, "961f6dd1e4dd30f63901690c512e78e4b45e4742ed197c3c5e45c549fd25f2e4187b0bc9fe30492b16b0d0bc4ef9b0f34c7003fac09a5ef1532e69430234cebd"),
        (3, "33d0825dddf7ada99b0e7e307104ad07ca9cfd9692214f1561356315e784f3e5a17e364ae9dbb14cb2036df932b77f4b292761365fb328de7afdc6d8998f5fc1"),
        (64, "65676d800617972fbd87e4b9514e1c67402b7a331096d3bfac22f1abb95374abc942f16e9ab0ead33b87c91968a6e509e119ff07787b3ef483e1dcdccf6e3022"),
        (127, "76d2d819c92bce55fa8e092ab1bf9b9eab237a25267986cacf2b8ee14d214d730dc9a5aa2d7b596e86a1fd8fa0804c77402d2fcd45083688b218b1cdfa0dcbcb"),
        (128, "72065ee4dd91c2d8509fa1fc28a37c7fc9fa7d5b3f8ad3d0d7a25626b57b1b44788d4caf806290425f9890a3a2a35a905ab4b37acfd0da6e4517b2525c9651e4"),
        (129, "64475dfe7600d7171bea0b394e27c9b00d8e74dd1e416a79473682ad3dfdbb706631558055cfc8a40e07bd015a4540dcdea15883cbbf31412df1de1cd4152b91"),
        (255, "142709d62e28fcccd0af97fad0f8465b971e82201dc51070faa0372aa43e92484be1c1e73ba10906d5d1853db6a4106e0a7bf9800d373d6dee2d46d62ef2a461"),
    ]

    @Test(arguments: keyedVectors.indices)
    func keyedVectorFromOfficialSet(_ vector: Int) {
        let (length, digest) = Self.keyedVectors[vector]
        let key = (0..<64).map { UInt8($0) }
        #expect(Hex.string(BLAKE2b.hash((0..<length).map { UInt8($0) }, key: key)) == digest)
    }

    @Test func incrementalUpdatesMatchOneShot() {
        let message = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        for split in [0, 1, 127, 128, 129, 256, 300] {
            var hasher = BLAKE2b(outputByteCount: 48, key: [1, 2, 3])
            hasher.update(message[..<split])
            hasher.update(message[split...])
            #expect(hasher.finalize() == BLAKE2b.hash(message, outputByteCount: 48, key: [1, 2, 3]), "split at \(split)")
        }
    }

    @Test func shortDigestsAreNotTruncationsOfLongOnes() {
        // The digest length is part of the parameter block, so BLAKE2b-256 is not the first half of BLAKE2b-512.
        let short = BLAKE2b.hash(Array("abc".utf8), outputByteCount: 32)
        #expect(short.count == 32)
        #expect(short != Array(BLAKE2b.hash(Array("abc".utf8)).prefix(32)))
    }
}

import LatchkeyPasswords
import Testing

/// RFC 9106 §5: m=32 KiB, t=3, p=4, T=32, with a secret and associated data (the reference's `kats/` files agree).
struct Argon2RFCVectorTests {
    static let expectedTags: [(Argon2.Variant, String)] = [
        (.argon2d, "51 2b 39 1b 6f 11 62 97 53 71 d3 09 19 73 42 94 f8 68 e3 be 39 84 f3 c1 a1 3a 4d b9 fa be 4a cb"),
        (.argon2i, "c8 14 d9 d1 dc 7f 37 aa 13 f0 d7 7f 24 94 bd a1 c8 de 6b 01 6d d3 88 d2 99 52 a4 c4 67 2b 6c e8"),
        (.argon2id, "0d 64 0d f5 8d 78 76 6c 08 c0 37 a3 4a 8b 53 c9 d0 1e f0 45 2d 75 b6 5e b5 25 20 e9 6b 01 e6 59"),
    ]

    @Test(arguments: expectedTags.indices)
    func rfc9106Section5Vector(_ vector: Int) throws {
        let (variant, tag) = Self.expectedTags[vector]
        let parameters = Argon2.Parameters(variant: variant, memoryKibibytes: 32, iterations: 3, parallelism: 4, tagByteCount: 32)
        let computed = try Argon2.hash(
            password: [UInt8](repeating: 0x01, count: 32),
            salt: [UInt8](repeating: 0x02, count: 16),
            parameters: parameters,
            secret: [UInt8](repeating: 0x03, count: 8),
            associatedData: [UInt8](repeating: 0x04, count: 12)
        )
        #expect(computed == Hex.bytes(tag), "\(variant.name)")
    }

    @Test func parametersOutsideTheRFCRangesThrow() {
        let salt = [UInt8](repeating: 0, count: 16)
        let invalid = [
            Argon2.Parameters(memoryKibibytes: 31, iterations: 1, parallelism: 4),
            Argon2.Parameters(memoryKibibytes: 64, iterations: 0, parallelism: 1),
            Argon2.Parameters(memoryKibibytes: 64, iterations: 1, parallelism: 0),
            Argon2.Parameters(memoryKibibytes: 64, iterations: 1, parallelism: 1, tagByteCount: 3),
        ]
        for parameters in invalid {
            #expect(throws: PasswordHashingError.self, "\(parameters)") {
                try Argon2.hash(password: [], salt: salt, parameters: parameters)
            }
        }
        #expect(throws: PasswordHashingError.self) {
            try Argon2.hash(password: [], salt: [1, 2, 3, 4, 5, 6, 7], parameters: .init(memoryKibibytes: 8, iterations: 1, parallelism: 1))
        }
    }
}

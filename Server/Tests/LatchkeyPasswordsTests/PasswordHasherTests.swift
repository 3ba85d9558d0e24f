import Foundation
import LatchkeyPasswords
import Testing

struct PasswordHasherTests {
    /// Cheap settings for tests that are about behaviour, not cost.
    static func cheapHasher(memory: Int = 64, iterations: Int = 1, saltByteCount: Int = 16) throws -> PasswordHasher {
        try PasswordHasher(algorithm: .argon2(.init(memoryKibibytes: memory, iterations: iterations, parallelism: 1)), saltByteCount: saltByteCount)
    }

    @Test func defaultHashIsOwaspArgon2idPHCString() throws {
        let phc = try PasswordHasher().hash("correct horse battery staple")
        let fields = phc.split(separator: "$", omittingEmptySubsequences: false)
        #expect(fields.count == 6)
        #expect(fields[1] == "argon2id" && fields[2] == "v=19" && fields[3] == "m=19456,t=2,p=1")
        #expect(fields[4].count == 22, "16 bytes of salt in unpadded base64")
        #expect(fields[5].count == 43, "32 bytes of hash in unpadded base64")
        #expect(!fields[4].contains("=") && !fields[5].contains("="), "no padding")
    }

    @Test func hashVerifiesAsValid() throws {
        let hasher = try Self.cheapHasher()
        for password in ["", "hunter2", "pässwörd", "🔑 パスワード"] {
            #expect(hasher.verify(password, against: hasher.hash(password)) == .valid, "\(password)")
        }
    }

    @Test func wrongPasswordIsInvalid() throws {
        let hasher = try Self.cheapHasher()
        let phc = hasher.hash("hunter2")
        for wrong in ["hunter3", "Hunter2", "hunter2 ", ""] {
            #expect(hasher.verify(wrong, against: phc) == .invalid, "\(wrong)")
        }
    }

    @Test func passwordsAreHashedAsGivenWithoutNormalisation() throws {
        let hasher = try Self.cheapHasher()
        let composed = "\u{E9}"  // é as one scalar (NFC)
        let decomposed = "e\u{301}"  // é as e + combining acute (NFD); equal as Swift Strings, different UTF-8
        #expect(hasher.verify(decomposed, against: hasher.hash(composed)) == .invalid)
    }

    @Test func saltIsFreshForEveryHash() throws {
        let hasher = try Self.cheapHasher()
        #expect(hasher.hash("same") != hasher.hash("same"))
    }

    @Test func scryptHashesRoundTrip() throws {
        let hasher = try PasswordHasher(algorithm: .scrypt(.init(costExponent: 10, blockSize: 8, parallelism: 1)))
        let phc = hasher.hash("hunter2")
        #expect(phc.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        #expect(hasher.verify("hunter2", against: phc) == .valid)
        #expect(hasher.verify("hunter3", against: phc) == .invalid)
    }

    @Test func scryptHashNeedsRehashUnderArgon2id() throws {
        let scrypt = try PasswordHasher(algorithm: .scrypt(.init(costExponent: 10, blockSize: 8, parallelism: 1)))
        let phc = scrypt.hash("hunter2")
        #expect(try Self.cheapHasher().verify("hunter2", against: phc) == .validNeedsRehash)
        #expect(try Self.cheapHasher().verify("hunter3", against: phc) == .invalid)
    }

    @Test func otherParametersNeedRehash() throws {
        let current = try Self.cheapHasher(memory: 64, iterations: 2)
        let older: [PasswordHasher] = [
            try Self.cheapHasher(memory: 32, iterations: 2),
            try Self.cheapHasher(memory: 64, iterations: 1),
            try Self.cheapHasher(memory: 64, iterations: 2, saltByteCount: 8),
            try PasswordHasher(algorithm: .argon2(.init(memoryKibibytes: 64, iterations: 2, parallelism: 2))),
            try PasswordHasher(algorithm: .argon2(.init(memoryKibibytes: 64, iterations: 2, parallelism: 1, tagByteCount: 16))),
            try PasswordHasher(algorithm: .argon2(.init(variant: .argon2i, memoryKibibytes: 64, iterations: 2, parallelism: 1))),
        ]
        for hasher in older {
            #expect(current.verify("hunter2", against: hasher.hash("hunter2")) == .validNeedsRehash, "\(hasher.algorithm)")
        }
    }

    @Test func settingsOutsideTheLimitsAreRefusedAtInit() {
        let refused: [(PasswordHasher.Algorithm, Int)] = [
            (.argon2(.init(memoryKibibytes: (1 << 20) + 1, iterations: 1, parallelism: 1)), 16),
            (.argon2(.init(memoryKibibytes: 64, iterations: 11, parallelism: 1)), 16),
            (.argon2(.init(memoryKibibytes: 1024, iterations: 1, parallelism: 17)), 16),
            (.argon2(.init(memoryKibibytes: 64, iterations: 1, parallelism: 1, tagByteCount: 65)), 16),
            (.argon2(.init(memoryKibibytes: 8, iterations: 1, parallelism: 2)), 16),
            (.scrypt(.init(costExponent: 21, blockSize: 8, parallelism: 1)), 16),
            (.scrypt(.init(costExponent: 10, blockSize: 17, parallelism: 1)), 16),
            (.owaspArgon2id, 7),
            (.owaspArgon2id, 65),
        ]
        for (algorithm, saltByteCount) in refused {
            #expect(throws: PasswordHashingError.self, "\(algorithm) salt \(saltByteCount)") {
                try PasswordHasher(algorithm: algorithm, saltByteCount: saltByteCount)
            }
        }
    }
}

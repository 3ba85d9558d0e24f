import Foundation
import LatchkeyPasswords
import Testing

/// Agreement with libargon2, the reference C implementation, as argon2-cffi ships it.
struct Argon2InteropTests {
    struct RawCase: Decodable, Sendable, CustomStringConvertible {
        let variant: String
        let password: String
        let salt: String
        let memory: Int
        let iterations: Int
        let parallelism: Int
        let tagLength: Int
        let tag: String

        var description: String {
            "\(variant) m=\(memory) t=\(iterations) p=\(parallelism) T=\(tagLength) password=\(password) salt=\(salt)"
        }
    }

    struct PasswordAndPHC: Codable, Sendable {
        let password: String
        let phc: String
    }

    static let randomCaseCount = 60

    @Test(.enabled(if: InteropPython.isConfigured, InteropPython.skipReason))
    func tagsMatchLibargon2OnRandomInputs() async throws {
        let cases = try await InteropPython.run(["raw-cases", String(Self.randomCaseCount), "9106"], as: [RawCase].self)
        #expect(cases.count == Self.randomCaseCount)
        for vector in cases {
            let variant = try #require(Argon2.Variant.allCases.first { $0.name == vector.variant })
            let parameters = Argon2.Parameters(
                variant: variant,
                memoryKibibytes: vector.memory,
                iterations: vector.iterations,
                parallelism: vector.parallelism,
                tagByteCount: vector.tagLength
            )
            let tag = try Argon2.hash(password: Hex.bytes(vector.password), salt: Hex.bytes(vector.salt), parameters: parameters)
            #expect(Hex.string(tag) == vector.tag, "\(vector)")
        }
    }

    @Test(.enabled(if: InteropPython.isConfigured, InteropPython.skipReason))
    func argon2CffiPHCStringsVerifyHere() async throws {
        let entries = try await InteropPython.run(["phc-strings", "1"], as: [PasswordAndPHC].self)
        let hasher = try PasswordHasher()
        for entry in entries {
            let expected: PasswordHasher.Verification = entry.phc.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$") ? .valid : .validNeedsRehash
            #expect(hasher.verify(entry.password, against: entry.phc) == expected, "\(entry.phc)")
            #expect(hasher.verify(entry.password + "x", against: entry.phc) == .invalid, "\(entry.phc)")
        }
    }

    @Test(.enabled(if: InteropPython.isConfigured, InteropPython.skipReason))
    func ourPHCStringsVerifyInArgon2Cffi() async throws {
        let algorithms: [(PasswordHasher.Algorithm, Int)] = [
            (.owaspArgon2id, 16),
            (.argon2(.init(memoryKibibytes: 64, iterations: 1, parallelism: 1)), 16),
            (.argon2(.init(memoryKibibytes: 256, iterations: 3, parallelism: 2, tagByteCount: 16)), 8),
            (.argon2(.init(variant: .argon2i, memoryKibibytes: 128, iterations: 2, parallelism: 1, tagByteCount: 64)), 32),
            (.argon2(.init(variant: .argon2d, memoryKibibytes: 96, iterations: 4, parallelism: 3)), 12),
        ]
        let passwords = ["", "correct horse battery staple", "pässwörd", "🔑 key", "パスワード"]
        var entries = [PasswordAndPHC]()
        for (index, password) in passwords.enumerated() {
            let (algorithm, saltByteCount) = algorithms[index % algorithms.count]
            let hasher = try PasswordHasher(algorithm: algorithm, saltByteCount: saltByteCount)
            entries.append(PasswordAndPHC(password: password, phc: hasher.hash(password)))
        }
        // A wrong password must fail there too.
        entries.append(PasswordAndPHC(password: "wrong", phc: entries[1].phc))

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-argon2-\(UUID().uuidString).json")
        try JSONEncoder().encode(entries).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let answers = try await InteropPython.run(["verify", file.path], as: [Bool].self)
        #expect(answers == Array(repeating: true, count: passwords.count) + [false], "\(entries.map(\.phc))")
    }
}

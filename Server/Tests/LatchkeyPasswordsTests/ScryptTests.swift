import Foundation
import LatchkeyPasswords
import Testing

struct ScryptTests {
    @Test func rfc7914Vector() throws {
        let key = try Scrypt.deriveKey(
            password: Array("password".utf8),
            salt: Array("NaCl".utf8),
            parameters: .init(costExponent: 10, blockSize: 8, parallelism: 16, keyByteCount: 64)
        )
        #expect(
            Hex.string(key)
                == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
                + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
        )
    }

    @Test func emptyPasswordHashes() throws {
        let key = try Scrypt.deriveKey(password: [], salt: [], parameters: .init(costExponent: 4, blockSize: 1, parallelism: 1))
        #expect(key.count == 32)
    }

    @Test(.enabled(if: InteropPython.isConfigured, InteropPython.skipReason))
    func hashlibScryptPHCStringsVerifyAndNeedRehash() async throws {
        let entries = try await InteropPython.run(["scrypt-strings", "1"], as: [Argon2InteropTests.PasswordAndPHC].self)
        let argon2Hasher = try PasswordHasher()
        let scryptHasher = try PasswordHasher(algorithm: .owaspScrypt)
        for entry in entries {
            #expect(argon2Hasher.verify(entry.password, against: entry.phc) == .validNeedsRehash, "\(entry.phc)")
            let expected: PasswordHasher.Verification = entry.phc.hasPrefix("$scrypt$ln=17,r=8,p=1$") ? .valid : .validNeedsRehash
            #expect(scryptHasher.verify(entry.password, against: entry.phc) == expected, "\(entry.phc)")
            #expect(scryptHasher.verify(entry.password + "x", against: entry.phc) == .invalid, "\(entry.phc)")
        }
    }
}

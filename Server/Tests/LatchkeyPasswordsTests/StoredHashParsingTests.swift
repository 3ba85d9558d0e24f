import Foundation
import LatchkeyPasswords
import Testing

/// What `verify` makes of stored strings that are malformed or ask for too much work: always `.invalid`, quickly.
struct StoredHashParsingTests {
    /// Made by argon2-cffi for "password" (salt "0123456789abcdef"), and by hashlib.scrypt likewise.
    static let argon2 = "$argon2id$v=19$m=64,t=1,p=1$MDEyMzQ1Njc4OWFiY2RlZg$c8unoZL1fMiTW9VzsIzI4XiLIjeYmhsk2dCIUg21RpY"
    static let scrypt = "$scrypt$ln=10,r=8,p=1$MDEyMzQ1Njc4OWFiY2RlZg$ZEBCzLptWM7dhpNJDU2HbQ945ovKHmVEozHkePPbSqw"
    static let salt = "MDEyMzQ1Njc4OWFiY2RlZg"
    static let hash = "c8unoZL1fMiTW9VzsIzI4XiLIjeYmhsk2dCIUg21RpY"

    static let malformed: [String] = [
        "", "$", "$$$$$", "password", String(argon2.dropFirst()), argon2 + "$", argon2 + "\n", " " + argon2,
        argon2.replacingOccurrences(of: "argon2id", with: "argon2x"),
        argon2.replacingOccurrences(of: "argon2id", with: "ARGON2ID"),
        argon2.replacingOccurrences(of: "$v=19", with: ""),
        argon2.replacingOccurrences(of: "v=19", with: "v=16"),
        argon2.replacingOccurrences(of: "v=19", with: "v=019"),
        argon2.replacingOccurrences(of: "m=64", with: "m=064"),
        argon2.replacingOccurrences(of: "m=64", with: "m=+64"),
        argon2.replacingOccurrences(of: "m=64", with: "m=-64"),
        argon2.replacingOccurrences(of: "m=64", with: "m=64.0"),
        argon2.replacingOccurrences(of: "m=64", with: "m=99999999999"),
        argon2.replacingOccurrences(of: "m=64", with: "m="),
        argon2.replacingOccurrences(of: "m=64,t=1", with: "t=1,m=64"),
        argon2.replacingOccurrences(of: ",p=1", with: ""),
        argon2.replacingOccurrences(of: "p=1", with: "p=1,"),
        argon2.replacingOccurrences(of: "p=1", with: "p=1,keyid=AAAA"),
        argon2.replacingOccurrences(of: "p=1", with: "p=1,data=AAAA"),
        argon2.replacingOccurrences(of: salt, with: salt + "=="),
        argon2.replacingOccurrences(of: salt, with: salt.replacingOccurrences(of: "Y", with: "-")),
        argon2.replacingOccurrences(of: salt, with: String(salt.dropLast()) + "h"),  // non-zero unused bits
        argon2.replacingOccurrences(of: salt, with: ""),
        argon2.replacingOccurrences(of: salt, with: "MDEyMzQ1Ng"),  // 7 bytes
        argon2.replacingOccurrences(of: hash, with: String(hash.dropLast()) + "Z"),  // non-zero unused bits
        argon2.replacingOccurrences(of: hash, with: String(hash.dropLast(3))),  // length 4k + 1
        argon2.replacingOccurrences(of: hash, with: hash + " "),
        argon2.replacingOccurrences(of: hash, with: ""),
        argon2.replacingOccurrences(of: hash, with: "c8un\u{0}oZL1"),
        argon2 + String(repeating: "A", count: 600),
        scrypt.replacingOccurrences(of: "ln=10,r=8,p=1", with: "ln=10,p=1,r=8"),
        scrypt.replacingOccurrences(of: "$scrypt$", with: "$scrypt$v=19$"),
        scrypt.replacingOccurrences(of: "ln=10", with: "n=1024"),
        "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW",
    ]

    static let overLimits: [String] = [
        argon2.replacingOccurrences(of: "m=64", with: "m=1048577"),
        argon2.replacingOccurrences(of: "m=64", with: "m=4294967295"),
        argon2.replacingOccurrences(of: "t=1", with: "t=11"),
        argon2.replacingOccurrences(of: "t=1", with: "t=0"),
        argon2.replacingOccurrences(of: "m=64,t=1,p=1", with: "m=1024,t=1,p=17"),
        argon2.replacingOccurrences(of: "p=1", with: "p=0"),
        argon2.replacingOccurrences(of: "m=64,t=1,p=1", with: "m=8,t=1,p=2"),
        argon2.replacingOccurrences(of: hash, with: "AAAA"),  // a 3-byte tag
        argon2.replacingOccurrences(of: hash, with: String(repeating: "A", count: 87)),  // 65 bytes
        scrypt.replacingOccurrences(of: "ln=10", with: "ln=21"),
        scrypt.replacingOccurrences(of: "ln=10", with: "ln=0"),
        scrypt.replacingOccurrences(of: "r=8", with: "r=17"),
        scrypt.replacingOccurrences(of: "p=1", with: "p=17"),
        scrypt.replacingOccurrences(of: "ln=10,r=8", with: "ln=20,r=16"),  // 2 GiB
    ]

    @Test func referenceStringsVerify() throws {
        let hasher = try PasswordHasher(algorithm: .argon2(.init(memoryKibibytes: 64, iterations: 1, parallelism: 1)))
        #expect(hasher.verify("password", against: Self.argon2) == .valid)
        #expect(hasher.verify("password", against: Self.scrypt) == .validNeedsRehash)
    }

    @Test(arguments: malformed)
    func malformedStringIsInvalid(_ phc: String) throws {
        #expect(try PasswordHasher().verify("password", against: phc) == .invalid)
    }

    @Test(arguments: overLimits)
    func parametersOverTheLimitsAreRefusedWithoutHashing(_ phc: String) throws {
        let hasher = try PasswordHasher()
        let elapsed = ContinuousClock().measure {
            #expect(hasher.verify("password", against: phc) == .invalid)
        }
        #expect(elapsed < .milliseconds(50), "refusing should not start the work")
    }
}

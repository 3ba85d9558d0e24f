import Foundation
import Testing

@testable import LatchkeyServer

/// The TOTP arithmetic behind second factors: RFC 6238's published SHA-1 vectors, the secret's form, the skew window
/// and the recovery codes' form.
@Suite struct TOTPSecretTests {
    /// RFC 6238 Appendix B: the ASCII secret "12345678901234567890", SHA-1, 8 digits.
    @Test(arguments: [
        (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"), (1_234_567_890, "89005924"),
        (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
    ])
    func rfc6238Vectors(time: Int, expected: String) {
        let secret = TOTPSecret(text: "12345678901234567890")
        let step = TOTPSecret.step(at: Date(timeIntervalSince1970: TimeInterval(time)))
        #expect(secret.code(step: step, digits: 8) == expected)
        // The 6-digit code is the 8-digit one's last six, leading zeros kept.
        #expect(secret.code(step: step) == String(expected.suffix(6)))
    }

    @Test func theAppsSecretIsBase32OfTheKey() {
        #expect(TOTPSecret(text: "12345678901234567890").base32 == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        let generated = TOTPSecret.generate()
        #expect(generated.text.count == 32)
        #expect(generated.text.allSatisfy { "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".contains($0) })
        #expect(TOTPSecret.generate().text != generated.text)
        #expect(!"\(generated)".contains(generated.text))
    }

    @Test func codesOneStepEitherSideMatchAndTwoStepsDoNot() {
        let secret = TOTPSecret.generate()
        let now = Date(timeIntervalSince1970: 1_800_000_015)
        let step = TOTPSecret.step(at: now)
        for offset in Int64(-1)...1 { #expect(secret.matchingStep(secret.code(step: step + offset), at: now) == step + offset) }
        for offset in [Int64(-2), 2] where secret.code(step: step + offset) != secret.code(step: step) {
            #expect(secret.matchingStep(secret.code(step: step + offset), at: now) == nil)
        }
    }

    @Test func theURINamesTheIssuerAndTheAccount() {
        let uri = TOTPSecret(text: "12345678901234567890").uri(issuer: "Mystica", account: "ann@example.com")
        #expect(uri.hasPrefix("otpauth://totp/Mystica:ann@example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"))
        #expect(uri.contains("issuer=Mystica"))
    }

    @Test func recoveryCodesAreTenBase32PairsAcceptedInAnyCaseWithOrWithoutTheDash() {
        let codes = RecoveryCode.generateSet()
        #expect(codes.count == 10)
        #expect(Set(codes).count == 10)
        for code in codes {
            #expect(code.count == 11 && code.dropFirst(5).first == "-")
            let canonical = code.replacingOccurrences(of: "-", with: "")
            #expect(RecoveryCode.normalize(code) == canonical)
            #expect(RecoveryCode.normalize(code.lowercased()) == canonical)
            #expect(RecoveryCode.normalize(canonical.lowercased()) == canonical)
        }
        #expect(RecoveryCode.normalize("ABCDE-FGHI1") == nil)
        #expect(RecoveryCode.normalize("ABCDE-FGH") == nil)
        #expect(RecoveryCode.hash("ABCDEFGHIJ", salt: "a") != RecoveryCode.hash("ABCDEFGHIJ", salt: "b"))
    }
}

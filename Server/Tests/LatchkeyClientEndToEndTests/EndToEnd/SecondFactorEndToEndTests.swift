import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyClient
import LatchkeyServer
import LatchkeyTestSupport
import Testing

/// Second factors through the SDK against a live server: seed 002's player adds an authenticator app to the email
/// account of its device user, signs in on a new install with the password and a code, steps up to delete nothing
/// by accident, and falls back on a recovery code.
@Suite(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason))
struct SecondFactorEndToEndTests {
    @Test func aPlayerAddsAnAuthenticatorAppAndSignsInWithItOnANewInstall() async throws {
        try await LiveServer.start(email: true) { server in
            let email = EmailPasswordEndToEndTests.address("mfa")
            let app = AppInstall(server: server)
            let first = app.launch()
            _ = await first.bootstrap()
            let device = try await first.registerDevice()
            #expect(device.amr == [.device, .hardwareKey])
            #expect(device.aal == .aal1)
            _ = try await first.register(email: email, password: "correct horse battery")
            let verification = try await EmailPasswordEndToEndTests.newMail(to: email)
            _ = try await first.verifyEmail(code: verification.code)

            let enrollment = try await first.enrollTOTP()
            #expect(enrollment.otpauthURI.absoluteString.contains("issuer="))
            #expect(!"\(enrollment)".contains(enrollment.secret))
            await expectRefusal(.invalidCode) { try await first.confirmTOTP(factorID: enrollment.factorID, code: "000000") }
            let codes = try await first.confirmTOTP(factorID: enrollment.factorID, code: TOTP.code(enrollment.secret, at: server.clock.now()))
            #expect(codes.count == 10)
            // The confirming session is aal2 at once (the SDK refreshed).
            guard case .signedIn(let confirmed) = await first.state else {
                Issue.record("signed out by the confirmation")
                return
            }
            #expect(confirmed.aal == .aal2)
            #expect(confirmed.amr == [.device, .hardwareKey, .otp])

            // A new install: the password alone is not enough.
            let phone = AppInstall(server: server).launch()
            _ = await phone.bootstrap()
            let error = await #expect(throws: LatchkeyError.self) { try await phone.signIn(email: email, password: "correct horse battery") }
            guard case .mfaRequired(let challenge) = error else {
                Issue.record("expected mfaRequired, got \(String(describing: error))")
                return
            }
            #expect(challenge.factors.map(\.type) == [.totp])
            #expect(await !phone.state.isSignedIn)
            // The code the confirmation used (this step) is spent: refused like a wrong one. The next step's works.
            await expectRefusal(.invalidCode) {
                try await phone.completeSignIn(challenge, code: TOTP.code(enrollment.secret, at: server.clock.now()))
            }
            let signedIn = try await phone.completeSignIn(challenge, code: TOTP.code(enrollment.secret, at: server.clock.now() + 30))
            #expect(signedIn.userID == device.userID)
            #expect(signedIn.aal == .aal2)
            #expect(signedIn.amr == [.password, .otp])

            // A recovery code on a third install, once.
            let tablet = AppInstall(server: server).launch()
            _ = await tablet.bootstrap()
            guard case .mfaRequired(let second) = await Self.refusal({ try await tablet.signIn(email: email, password: "correct horse battery") })
            else { return }
            let recovered = try await tablet.completeSignIn(second, recoveryCode: codes[0].lowercased())
            #expect(recovered.amr == [.password, .recovery])
            guard case .mfaRequired(let third) = await Self.refusal({ try await tablet.signIn(email: email, password: "correct horse battery") })
            else { return }
            await expectRefusal(.invalidCode) { try await tablet.completeSignIn(third, recoveryCode: codes[0]) }

            // Past the step-up lifetime a sensitive action needs a code again; a step-up lets it through.
            app.advance(by: 601)
            await expectRefusal(.aal2Required) { try await phone.regenerateRecoveryCodes() }
            let stepped = try await phone.stepUp(code: TOTP.code(enrollment.secret, at: server.clock.now()))
            #expect(stepped.aal == .aal2)
            #expect(try await phone.regenerateRecoveryCodes().count == 10)
            #expect(try await phone.mfaFactors().map(\.confirmed) == [true])
        }
    }

    static func refusal(_ body: () async throws -> some Any) async -> LatchkeyError? {
        do {
            _ = try await body()
            Issue.record("expected a refusal")
            return nil
        } catch let error as LatchkeyError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }
}

/// RFC 6238 with SHA-1, 6 digits, 30-second steps, written here apart from the server's (which uses HummingbirdOTP).
enum TOTP {
    static func code(_ base32Secret: String, at date: Date) -> String {
        let key = SymmetricKey(data: Self.base32Decode(base32Secret))
        var counter = UInt64(date.timeIntervalSince1970 / 30).bigEndian
        let message = withUnsafeBytes(of: &counter) { Data($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let value = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        let digits = String(value % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    static func base32Decode(_ text: String) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = 0
        var buffer = 0
        var bytes: [UInt8] = []
        for character in text.uppercased() where character != "=" {
            guard let index = alphabet.firstIndex(of: character) else { continue }
            buffer = (buffer << 5) | index
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8((buffer >> bits) & 0xff))
            }
        }
        return bytes
    }
}

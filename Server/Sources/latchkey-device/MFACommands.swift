import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyClient

struct MFA: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mfa",
        abstract: "Second factors: enroll and confirm a TOTP factor, finish a sign-in or step up with a code, list and remove factors.",
        discussion: """
            Codes (TOTP or recovery) are standard input's first line, never arguments, which the process list shows. A sign-in \
            (login, apple) that answers mfa_required exits 3 and keeps its challenge in --state for five minutes: \
            `printf '%s\\n' "$CODE" | latchkey-device mfa verify` finishes it.
            """,
        subcommands: [Enroll.self, Confirm.self, Verify.self, Factors.self, Remove.self, RecoveryCodes.self])

    struct Enroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a TOTP factor (POST /mfa/totp): prints factor_id, secret and otpauth_uri for an authenticator app.",
            discussion: "The factor does nothing until `mfa confirm <factor-id>`. Exit 1 when the user has a confirmed factor already.")
        @OptionGroup var options: DeviceOptions

        func run() async throws {
            try await self.options.run { session in
                let enrollment = try await session.enrollTOTP()
                let result = ["factor_id": enrollment.factorID, "secret": enrollment.secret, "otpauth_uri": enrollment.otpauthURI.absoluteString]
                Output.print(result, json: self.options.json)
            }
        }
    }

    struct Confirm: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Confirm a TOTP factor with a code from the app (POST /mfa/totp/{id}/confirm); prints the ten recovery codes.",
            discussion: """
                The code is standard input's first line. The recovery codes are shown this once, one a line (--json: \
                recovery_codes). The session is refreshed after, so `status` shows aal: aal2. Exit 1 when the code is wrong.
                """)
        @OptionGroup var options: DeviceOptions
        @Argument(help: "The factor ID `mfa enroll` printed.") var factorID: String

        func run() async throws {
            let code = try StandardInput.firstLine(naming: "code from the authenticator app")
            try await self.options.run { session in
                let codes = try await session.confirmTOTP(factorID: self.factorID, code: code)
                if self.options.json { return Output.printJSON(["recovery_codes": codes]) }
                for code in codes { print(code) }
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Prove the second factor (POST /mfa/verify): finish the sign-in waiting in --state, else step up the session.",
            discussion: """
                The code is standard input's first line. When a login or apple sign-in answered mfa_required less than five \
                minutes ago, this finishes it and starts its session; otherwise the session in use steps up to aal2. Prints \
                the session (with aal and amr). Exit 1 when the code is wrong (the waiting sign-in stays for another try), 3 \
                when the waiting sign-in has expired or is spent (sign in again) or there is no session, 4 after too many \
                wrong codes.
                """)
        @OptionGroup var options: DeviceOptions
        @Flag(help: "Standard input holds a recovery code (XXXXX-XXXXX) instead of a TOTP code.") var recoveryCode = false

        func run() async throws {
            let code = try StandardInput.firstLine(naming: self.recoveryCode ? "recovery code" : "code from the authenticator app")
            let pending = PendingSignIn(stateDirectory: self.options.stateDirectory)
            try await self.options.run { session in
                let signedIn: AuthSession
                if let challenge = pending.load() {
                    do {
                        signedIn =
                            self.recoveryCode
                            ? try await session.completeSignIn(challenge, recoveryCode: code)
                            : try await session.completeSignIn(challenge, code: code)
                    } catch let error as LatchkeyError where error.code == .invalidMFAToken {
                        pending.remove()
                        throw error
                    }
                    pending.remove()
                } else {
                    signedIn = self.recoveryCode ? try await session.stepUp(recoveryCode: code) : try await session.stepUp(code: code)
                }
                Output.print(Output.describe(.signedIn(signedIn), deviceID: try await session.deviceID()), json: self.options.json)
            }
        }
    }

    struct Factors: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the user's second factors (GET /mfa/factors).")
        @OptionGroup var options: DeviceOptions

        func run() async throws {
            try await self.options.run { session in
                let factors = try await session.mfaFactors()
                if self.options.json { return Output.printJSON(encoding: MFAFactorsResponse(factors: factors)) }
                for factor in factors { print("\(factor.id) \(factor.type) \(factor.confirmed ? "confirmed" : "unconfirmed")") }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a second factor (DELETE /mfa/factors/{id}).",
            discussion: "Needs a recent step-up (`mfa verify`): exit 1 with aal2_required until then.")
        @OptionGroup var options: DeviceOptions
        @Argument(help: "The factor ID.") var factorID: String

        func run() async throws {
            try await self.options.run { session in
                try await session.removeFactor(id: self.factorID)
                Output.print(["removed": self.factorID], json: self.options.json)
            }
        }
    }

    struct RecoveryCodes: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "recovery-codes",
            abstract: "Issue new recovery codes, voiding the old ones (POST /mfa/recovery-codes); prints them one a line.",
            discussion: "Needs a recent step-up (`mfa verify`): exit 1 with aal2_required until then.")
        @OptionGroup var options: DeviceOptions

        func run() async throws {
            try await self.options.run { session in
                let codes = try await session.regenerateRecoveryCodes()
                if self.options.json { return Output.printJSON(["recovery_codes": codes]) }
                for code in codes { print(code) }
            }
        }
    }
}

/// A sign-in that answered `mfa_required`, kept in the state directory (beside the tokens, owner-only) until
/// `mfa verify` finishes it or its five minutes are over: each run of the app is a launch of its own.
struct PendingSignIn {
    /// How long the server keeps an `mfa_token`.
    static let lifetime: TimeInterval = 300
    let fileURL: URL

    init(stateDirectory: URL) { self.fileURL = stateDirectory.appendingPathComponent("mfa-challenge.json") }

    private struct Stored: Codable {
        var mfaToken: String
        var factors: [MFARequiredResponse.Factor]
        var expiresAt: Date
    }

    func save(_ challenge: MFAChallenge) {
        let factors = challenge.factors.map { MFARequiredResponse.Factor(id: $0.id, type: $0.type) }
        let stored = Stored(mfaToken: challenge.mfaToken, factors: factors, expiresAt: Date().addingTimeInterval(Self.lifetime))
        guard let data = try? JSONEncoder().encode(stored) else { return }
        try? FileManager.default.createDirectory(
            at: self.fileURL.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        self.remove()
        FileManager.default.createFile(atPath: self.fileURL.path, contents: data, attributes: [.posixPermissions: 0o600])
    }

    /// The waiting sign-in's challenge; `nil` when there is none or it expired (then it is removed).
    func load() -> MFAChallenge? {
        guard let data = try? Data(contentsOf: self.fileURL), let stored = try? JSONDecoder().decode(Stored.self, from: data) else { return nil }
        guard stored.expiresAt > Date() else {
            self.remove()
            return nil
        }
        return MFAChallenge(mfaToken: stored.mfaToken, factors: stored.factors.map { MFAChallenge.Factor(id: $0.id, type: $0.type) })
    }

    func remove() { try? FileManager.default.removeItem(at: self.fileURL) }
}

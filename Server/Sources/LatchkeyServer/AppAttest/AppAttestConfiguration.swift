import Configuration
import Foundation
import LatchkeyAppAttest
import SwiftASN1
import X509

/// App Attest (`app-attest.*`, `limits.app-attest`, `limits.app-attest-challenge`).
///
/// - `app-attest.policy`: `off` (default: `app_attest` is ignored), `report` (verify and record, never refuse), `guests`
///   (guest tokens only for attested devices), `required` (register-device and guests need attestation)
/// - `app-attest.app-ids`: the apps (`TEAMID.bundle.id`) whose attestations are accepted; required unless the policy is `off`
/// - `app-attest.environment`: `production` (default) or `development` (the AAGUID `appattestdevelop`)
/// - `app-attest.roots`: extra root certificates (PEM text, or a file path) beside Apple's pinned root, for tests only
/// - `app-attest.allow-debug-tokens`: whether debug tokens (`latchkey app-attest debug-token create`) stand in for attestation
/// - `app-attest.unattested-guest-limit`: under `report` and `guests`, the guest meters' limit for unattested devices
/// - `limits.app-attest.limit`/`.window`: attestations per key ID and per client IP, assertions per client IP (20 per 3600 s; 0 is off)
/// - `limits.app-attest-challenge.limit`/`.window`: challenges per client IP (60 per 300 s; 0 is off)
public struct AppAttestConfiguration: Sendable, Equatable {
    public enum Policy: String, Sendable, Equatable, CaseIterable {
        case off
        case report
        case guests
        case required
    }

    public var policy = Policy.off
    public var appIDs: [String] = []
    public var environment = AppAttestEnvironment.production
    /// PEM texts or file paths.
    public var roots: [String] = []
    public var allowDebugTokens = false
    public var unattestedGuestLimit: Int?
    /// Attestations per key ID and per client IP; assertions per client IP.
    public var limit = RateLimitPolicy(name: "app-attest", limit: 20, window: 3600)
    /// Challenges per client IP.
    public var challengeLimit = RateLimitPolicy(name: "app-attest-challenge", limit: 60, window: 300)
    private var unreadable: [String] = []

    public init() {}

    init(reader: ConfigReader, limits: ConfigReader) {
        let defaults = Self()
        let policy = reader.string(forKey: "policy", default: defaults.policy.rawValue)
        if let value = Policy(rawValue: policy) {
            self.policy = value
        } else {
            self.unreadable.append("app-attest.policy must be off, report, guests or required, not \"\(policy)\"")
        }
        self.appIDs = reader.stringArray(forKey: "app-ids", default: [])
        let environment = reader.string(forKey: "environment", default: defaults.environment.rawValue)
        if let value = AppAttestEnvironment(rawValue: environment) {
            self.environment = value
        } else {
            self.unreadable.append("app-attest.environment must be production or development, not \"\(environment)\"")
        }
        self.roots = reader.stringArray(forKey: "roots", default: [])
        self.allowDebugTokens = reader.bool(forKey: "allow-debug-tokens", default: defaults.allowDebugTokens)
        self.unattestedGuestLimit = reader.int(forKey: "unattested-guest-limit")
        self.limit = defaults.limit.reading(limits)
        self.challengeLimit = defaults.challengeLimit.reading(limits)
    }

    /// Whether `app_attest` is looked at at all.
    public var isEnabled: Bool { self.policy != .off }

    /// The guest meters' limit for a guest token without `att`, where the policy gives unattested devices a tier of their own.
    var unattestedGuestMeterLimit: Int? {
        self.policy == .report || self.policy == .guests ? self.unattestedGuestLimit : nil
    }

    /// The roots `app-attest.roots` names, parsed; throws naming the setting.
    func extraRoots() throws -> [Certificate] {
        try self.roots.map { entry in
            let text: String
            if entry.hasPrefix("-----BEGIN") {
                text = entry
            } else {
                guard let contents = try? String(contentsOfFile: entry, encoding: .utf8) else {
                    throw LatchkeyConfigurationError(description: "app-attest.roots: cannot read the file \"\(entry)\"")
                }
                text = contents
            }
            do { return try Certificate(pemEncoded: text) } catch {
                throw LatchkeyConfigurationError(description: "app-attest.roots: an entry is not a PEM certificate")
            }
        }
    }

    /// What is wrong with the settings; the server refuses to start with any.
    var problems: [String] {
        var problems = self.unreadable
        if self.policy != .off && self.appIDs.isEmpty {
            problems.append("app-attest.app-ids must name the app (TEAMID.bundle.id) when app-attest.policy is \(self.policy.rawValue)")
        }
        for app in self.appIDs where !Self.isAppID(app) {
            problems.append("app-attest.app-ids: \"\(app)\" is not TEAMID.bundle.id (a 10-character team ID, a dot, the bundle ID)")
        }
        // 1 or more: a limit of 0 switches a limit off, which would give unattested devices more than attested ones.
        if let limit = self.unattestedGuestLimit, limit < 1 { problems.append("app-attest.unattested-guest-limit must be 1 or more") }
        do { _ = try self.extraRoots() } catch { problems.append("\(error)") }
        return problems
    }

    private static func isAppID(_ text: String) -> Bool {
        guard let dot = text.firstIndex(of: ".") else { return false }
        let team = text[..<dot]
        let bundle = text[text.index(after: dot)...]
        return team.count == 10 && team.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) } && !bundle.isEmpty
            && bundle.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
    }
}

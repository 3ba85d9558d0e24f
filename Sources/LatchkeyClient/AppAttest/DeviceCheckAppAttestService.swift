#if canImport(DeviceCheck) && !os(watchOS) && !os(tvOS)
import DeviceCheck
import Foundation

extension AppAttestProvider {
    /// Apple's App Attest service (`DCAppAttestService.shared`): the key in the Secure Enclave, its attestation from
    /// Apple. The app needs the App Attest capability (entitlement `com.apple.developer.devicecheck.appattest-environment`:
    /// `development` while developing, which the server accepts with `app-attest.environment` `development`; TestFlight and
    /// App Store builds attest in production) and the server its `app-attest.app-ids` (`TEAMID.bundle.id`).
    public static var deviceCheck: AppAttestProvider { AppAttestProvider(service: DeviceCheckAppAttestService()) }
}

/// ``AppAttestService`` over `DCAppAttestService.shared`, with `DCError.invalidKey` and `.invalidInput` reported as
/// ``AppAttestServiceError/invalidKey``.
struct DeviceCheckAppAttestService: AppAttestService {
    var isSupported: Bool { DCAppAttestService.shared.isSupported }

    func generateKey() async throws -> String {
        try await Self.reportingInvalidKeys { try await DCAppAttestService.shared.generateKey() }
    }

    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try await Self.reportingInvalidKeys { try await DCAppAttestService.shared.attestKey(keyID, clientDataHash: clientDataHash) }
    }

    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try await Self.reportingInvalidKeys { try await DCAppAttestService.shared.generateAssertion(keyID, clientDataHash: clientDataHash) }
    }

    private static func reportingInvalidKeys<Result>(_ call: () async throws -> Result) async throws -> Result {
        do {
            return try await call()
        } catch let error as DCError where error.code == .invalidKey || error.code == .invalidInput {
            throw AppAttestServiceError.invalidKey
        }
    }
}
#endif

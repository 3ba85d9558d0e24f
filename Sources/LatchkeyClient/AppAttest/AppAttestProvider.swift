import Foundation

/// Where a session's App Attest evidence comes from (``LatchkeySession/Configuration/appAttest``): Apple's App Attest
/// service, another ``AppAttestService``, or a debug token.
///
/// With a service, ``LatchkeySession/registerDevice()`` and ``LatchkeySession/continueAsGuest()`` fetch a challenge
/// (`POST /api/v1/app-attest/challenge`), attest the device's key over SHA-256 of the challenge's bytes and send
/// `app_attest`; once the server has accepted the attestation (its token says `att: true`), a guest sign-in proves the
/// key with an assertion instead (`X-App-Attest-Assertion`, `X-App-Attest-Challenge`). A device whose service is not
/// supported sends nothing and stays unattested; the server's `app-attest.policy` decides what that device may do.
///
/// ```swift
/// #if targetEnvironment(simulator)
/// let appAttest = AppAttestProvider.debugToken(ProcessInfo.processInfo.environment["LATCHKEY_DEBUG_TOKEN"] ?? "")
/// #else
/// let appAttest = AppAttestProvider.deviceCheck
/// #endif
/// let configuration = LatchkeySession.Configuration(serverURL: serverURL, appAttest: appAttest)
/// ```
///
/// Its description names the kind of provider, never a debug token.
public struct AppAttestProvider: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    enum Source: Sendable {
        case service(any AppAttestService)
        case debugToken(String)
    }

    let source: Source

    /// A provider over `service` (DeviceCheck's `DCAppAttestService` on a device, a fake in tests).
    public init(service: any AppAttestService) { self.source = .service(service) }

    /// A provider that sends `app_attest: {"debug_token": token}` with every sign-in in place of an attestation, for the
    /// simulator and CI. The server accepts it only with `app-attest.allow-debug-tokens` and a token minted by
    /// `latchkey app-attest debug-token create`; never ship one in a release build.
    public static func debugToken(_ token: String) -> AppAttestProvider { AppAttestProvider(source: .debugToken(token)) }

    private init(source: Source) { self.source = source }

    /// `AppAttestProvider(service)` or `AppAttestProvider(debug token)`; never the token.
    public var description: String {
        switch self.source {
        case .service(let service): "AppAttestProvider(\(type(of: service)))"
        case .debugToken: "AppAttestProvider(debug token)"
        }
    }
    /// Same as ``description``.
    public var debugDescription: String { self.description }
    /// A mirror that shows only ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["provider": self.description]) }
}

#if canImport(AuthenticationServices) && !os(watchOS) && !os(tvOS)
import AuthenticationServices
import Foundation
import LatchkeyAPI

/// One AuthenticationServices request for a platform passkey, run to its end: the controller's delegate, answering
/// with the credential as the server's JSON. What it converts and how it reads failures are plain code beside it
/// (`RegistrationResponseJSON`'s and `AuthenticationResponseJSON`'s initializers, `PasskeyAuthorizationFailure`).
@MainActor
final class PasskeyAuthorization: NSObject, ASAuthorizationControllerDelegate {
    /// A credential, converted where the system handed it over.
    private enum Credential: Sendable {
        case registration(RegistrationResponseJSON)
        case assertion(AuthenticationResponseJSON)
    }

    private nonisolated let onlyImmediatelyAvailable: Bool
    private nonisolated let continuation = Locked<CheckedContinuation<Credential, any Error>?>(nil)
    /// The controller holds it weakly; so does this, for as long as the request runs.
    private let presentation: PresentationAnchorProvider?
    private var controller: ASAuthorizationController?

    private init(anchor: ASPresentationAnchor?, onlyImmediatelyAvailable: Bool) {
        self.presentation = anchor.map { PresentationAnchorProvider(anchor: $0) }
        self.onlyImmediatelyAvailable = onlyImmediatelyAvailable
    }

    /// Creates a passkey for `parameters`' relying party and user.
    static func register(_ parameters: PasskeyCreationParameters, anchor: ASPresentationAnchor?) async throws -> RegistrationResponseJSON {
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: parameters.relyingPartyID)
        let request = provider.createCredentialRegistrationRequest(
            challenge: parameters.challenge, name: parameters.userName, userID: parameters.userID)
        request.displayName = parameters.displayName
        request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: parameters.userVerification)
        request.attestationPreference = ASAuthorizationPublicKeyCredentialAttestationKind(rawValue: parameters.attestation)
        #if compiler(>=5.10)
        if #available(iOS 17.4, macOS 14.4, *) {
            request.excludedCredentials = parameters.excludedCredentialIDs.map {
                ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0)
            }
        }
        #endif
        let authorization = PasskeyAuthorization(anchor: anchor, onlyImmediatelyAvailable: false)
        guard case .registration(let credential) = try await authorization.perform(request, options: []) else {
            throw LatchkeyError.invalidResponse
        }
        return credential
    }

    /// Gets an assertion from one of the passkeys the device holds for `parameters`' relying party.
    static func assert(
        _ parameters: PasskeyAssertionParameters, anchor: ASPresentationAnchor?, preferImmediatelyAvailableCredentials: Bool
    ) async throws -> AuthenticationResponseJSON {
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: parameters.relyingPartyID)
        let request = provider.createCredentialAssertionRequest(challenge: parameters.challenge)
        request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: parameters.userVerification)
        request.allowedCredentials = parameters.allowedCredentialIDs.map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
        let authorization = PasskeyAuthorization(anchor: anchor, onlyImmediatelyAvailable: preferImmediatelyAvailableCredentials)
        let options: ASAuthorizationController.RequestOptions = preferImmediatelyAvailableCredentials ? .preferImmediatelyAvailableCredentials : []
        guard case .assertion(let credential) = try await authorization.perform(request, options: options) else {
            throw LatchkeyError.invalidResponse
        }
        return credential
    }

    /// Runs `request` until the delegate hears back; cancelling the calling task cancels the request
    /// (`CancellationError`).
    private func perform(_ request: ASAuthorizationRequest, options: ASAuthorizationController.RequestOptions) async throws -> Credential {
        let controller = ASAuthorizationController(authorizationRequests: [request])
        controller.delegate = self
        controller.presentationContextProvider = self.presentation
        self.controller = controller
        defer { self.controller = nil }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    self.continuation.withLock { $0 = continuation }
                    controller.performRequests(options: options)
                }
            } onCancel: {
                // Holds `self`, and so the delegate, until the request ends.
                Task { @MainActor in self.controller?.cancel() }
            }
        } catch {
            throw Task.isCancelled ? CancellationError() : error
        }
    }

    nonisolated func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        let credential: Credential? =
            switch authorization.credential {
            case let registration as ASAuthorizationPlatformPublicKeyCredentialRegistration:
                registration.rawAttestationObject.map {
                    .registration(
                        RegistrationResponseJSON(
                            credentialID: registration.credentialID, clientDataJSON: registration.rawClientDataJSON, attestationObject: $0))
                }
            case let assertion as ASAuthorizationPlatformPublicKeyCredentialAssertion:
                Self.assertion(assertion).map { .assertion($0) }
            default: nil
            }
        let result: Result<Credential, any Error> = credential.map { .success($0) } ?? .failure(LatchkeyError.invalidResponse)
        self.finish(result)
    }

    nonisolated func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        self.finish(.failure(Self.failure(error, onlyImmediatelyAvailable: self.onlyImmediatelyAvailable)))
    }

    private nonisolated func finish(_ result: Result<Credential, any Error>) {
        self.continuation.withLock { continuation in
            continuation?.resume(with: result)
            continuation = nil
        }
    }

    private nonisolated static func assertion(_ assertion: ASAuthorizationPlatformPublicKeyCredentialAssertion) -> AuthenticationResponseJSON? {
        // Implicitly unwrapped in the SDK's declarations: a nil would crash a plain use.
        guard let authenticatorData = assertion.rawAuthenticatorData as Data?, let signature = assertion.signature as Data? else { return nil }
        return AuthenticationResponseJSON(
            credentialID: assertion.credentialID, clientDataJSON: assertion.rawClientDataJSON, authenticatorData: authenticatorData,
            signature: signature, userHandle: assertion.userID as Data?)
    }

    /// The error to throw for what the controller reported: one of the SDK's passkey codes when the app can act on it
    /// (see `PasskeyAuthorizationFailure`), else the system's error as it came.
    private nonisolated static func failure(_ error: any Error, onlyImmediatelyAvailable: Bool) -> any Error {
        guard let error = error as? ASAuthorizationError else { return error }
        let underlying = error.userInfo[NSUnderlyingErrorKey] as? any Error
        let texts = [
            error.localizedDescription, error.userInfo[NSLocalizedFailureReasonErrorKey] as? String, underlying?.localizedDescription,
            underlying.map { String(describing: $0) },
        ]
        return PasskeyAuthorizationFailure.latchkeyError(
            code: error.code.rawValue, texts: texts.compactMap { $0 }, onlyImmediatelyAvailable: onlyImmediatelyAvailable) ?? error
    }
}

/// The window the passkey sheet is presented over, when the app names one.
private final class PresentationAnchorProvider: NSObject, ASAuthorizationControllerPresentationContextProviding {
    let anchor: ASPresentationAnchor

    init(anchor: ASPresentationAnchor) { self.anchor = anchor }

    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor { self.anchor }
}
#endif

#if canImport(AuthenticationServices) && !os(watchOS) && !os(tvOS)
import AuthenticationServices
import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// Adds a passkey to the signed-in user with the device's platform authenticator (iCloud Keychain, or the passkey
    /// manager the person chose): one Face ID or Touch ID prompt, and the passkey syncs to their other devices. Later, on
    /// a new phone, ``signInWithPasskey(presentationAnchor:preferImmediatelyAvailableCredentials:)`` signs them back in to
    /// this same user.
    ///
    /// ```swift
    /// try await session.registerPasskey(name: "iPhone")
    /// ```
    ///
    /// It runs ``passkeyRegistrationOptions()``, an `ASAuthorizationPlatformPublicKeyCredentialProvider` registration
    /// request for the server's relying party (`passkeys.rp-id`) with its challenge, user and the user's passkeys to
    /// exclude, then ``finishPasskeyRegistration(_:)``. The app needs the Associated Domains entitlement
    /// `webcredentials:<rp-id>` and the server its `passkeys.apple-app-ids` (see <doc:UsingPasskeys>).
    ///
    /// - Parameters:
    ///   - name: what the person calls the passkey in the app's list ("iPhone"); at most 64 characters, the server's
    ///     "Passkey" when `nil`.
    ///   - presentationAnchor: the window to present the system sheet over; when `nil` the controller gets no
    ///     presentation-context provider and AuthenticationServices picks the app's window.
    /// - Returns: the new passkey.
    /// - Throws: ``LatchkeyError/rejected(_:)`` with `passkey_cancelled` when the person closed the sheet,
    ///   `passkey_not_associated` when the app is not associated with the relying party's domain, `passkey_exists` when
    ///   this authenticator holds one of the user's passkeys already; the errors of ``passkeyRegistrationOptions()`` and
    ///   ``finishPasskeyRegistration(_:)``; `CancellationError` when the calling task is cancelled (the sheet is closed);
    ///   and any other `ASAuthorizationError` as AuthenticationServices reported it.
    @discardableResult
    public func registerPasskey(name: String? = nil, presentationAnchor: ASPresentationAnchor? = nil) async throws -> PasskeyResponse {
        let started = try await self.passkeyRegistrationOptions()
        let credential = try await PasskeyAuthorization.register(PasskeyCreationParameters(started.options), anchor: presentationAnchor)
        return try await self.finishPasskeyRegistration(
            PasskeyRegistrationRequest(challengeID: started.challengeID, credential: credential, name: name))
    }

    /// Signs in with one of the passkeys the device holds for the server's relying party, and starts the session of its
    /// user (see ``finishPasskeySignIn(_:)``): on a new phone, the same user ID as on the old one, with this device added
    /// to the user's devices.
    ///
    /// ```swift
    /// do {
    ///     try await session.signInWithPasskey()
    /// } catch let error as LatchkeyError where error.code == .passkeyCancelled {
    ///     // the person closed the sheet: nothing to say
    /// }
    /// ```
    ///
    /// It runs ``passkeyAuthenticationOptions()``, an `ASAuthorizationPlatformPublicKeyCredentialProvider` assertion
    /// request with the challenge (no allowed credentials: the system offers every passkey it holds for the relying
    /// party), then ``finishPasskeySignIn(_:)``.
    ///
    /// - Parameters:
    ///   - presentationAnchor: the window to present the system sheet over; when `nil` the controller gets no
    ///     presentation-context provider and AuthenticationServices picks the app's window.
    ///   - preferImmediatelyAvailableCredentials: ask only for passkeys on this device
    ///     (`ASAuthorizationController.RequestOptions.preferImmediatelyAvailableCredentials`): with none, the request ends
    ///     at once, with no sheet, as `no_passkey_credentials`. AuthenticationServices ends a sheet the person closed the
    ///     same way (`canceled`), so in this mode a closed sheet is `no_passkey_credentials` too; offer the other ways to
    ///     sign in for both. Without it (the default), a device without a passkey offers one from a nearby device
    ///     (a QR code), and closing the sheet is `passkey_cancelled`.
    /// - Throws: ``LatchkeyError/rejected(_:)`` with `passkey_cancelled`, `no_passkey_credentials` or
    ///   `passkey_not_associated` (see `ErrorCode.passkeyNotAssociated`), the errors of ``passkeyAuthenticationOptions()``
    ///   and ``finishPasskeySignIn(_:)`` (``LatchkeyError/mfaRequired(_:)`` among them), `CancellationError` when the
    ///   calling task is cancelled, and any other `ASAuthorizationError` as AuthenticationServices reported it.
    @discardableResult
    public func signInWithPasskey(
        presentationAnchor: ASPresentationAnchor? = nil, preferImmediatelyAvailableCredentials: Bool = false
    ) async throws
        -> AuthSession
    {
        let started = try await self.passkeyAuthenticationOptions()
        let assertion = try await PasskeyAuthorization.assert(
            PasskeyAssertionParameters(started.options), anchor: presentationAnchor,
            preferImmediatelyAvailableCredentials: preferImmediatelyAvailableCredentials)
        return try await self.finishPasskeySignIn(PasskeyAuthenticationRequest(challengeID: started.challengeID, credential: assertion))
    }
}
#endif

import HTTPTypes
import LatchkeyAPI

extension PasskeyRoutes {
    static let registrationOptions = APIOperation(
        .post, "/api/v1/passkeys/register/options", id: "passkeyRegistrationOptions", tag: "Passkeys",
        summary: "Start adding a passkey to the signed-in user",
        description: """
            Options for `navigator.credentials.create()` (`PublicKeyCredential.parseCreationOptionsFromJSON`) or \
            `ASAuthorizationPlatformPublicKeyCredentialProvider`, as WebAuthn Level 3's `PublicKeyCredentialCreationOptionsJSON`: \
            `rp` (`passkeys.rp-id`, `passkeys.rp-name`), `user` (`id` the base64url of the user UUID's 16 bytes — the `userHandle` of \
            later assertions; `name` and `displayName` the email address, else the user ID), a `challenge` of 32 random bytes, \
            `pubKeyCredParams` ES256 (-7), EdDSA (-8), RS256 (-257), `authenticatorSelection` (`residentKey: "required"`, \
            `userVerification` from `passkeys.user-verification`), `excludeCredentials` (the user's passkeys), `attestation: "none"` and \
            `timeout` (milliseconds). Send `challenge_id` back with the credential to `POST /api/v1/passkeys/register`, from this \
            session, within `passkeys.challenge-lifetime` seconds (300), once.

            Adding a way to sign in needs a recent sign-in (a session begun within `tokens.recent-authentication` seconds, or a DPoP \
            proof made with the session's key for this access token), and for a user with a confirmed second factor a step-up within \
            `mfa.step-up-lifetime`.
            """,
        outcomes: [
            .init(200, "The options and their `challenge_id`.", body: PasskeyRegistrationOptionsResponse.self, headers: ["Cache-Control"]),
            .forbidden(
                "Not a user's session (`forbidden`: guest tokens, access codes, provider tokens), no recent sign-in "
                    + "(`reauthentication_required`), or no recent step-up for a user with a second factor (`aal2_required`)."),
            .unavailable,
        ])

    static let register = APIOperation(
        .post, "/api/v1/passkeys/register", id: "registerPasskey", tag: "Passkeys", summary: "Add a passkey to the signed-in user",
        description: """
            `{challenge_id, credential, name?}`: `credential` is the `RegistrationResponseJSON` of `navigator.credentials.create()` \
            (`PublicKeyCredential.toJSON()`). Needs the Bearer of the session that asked for the options. The challenge is spent by this \
            request whatever its outcome. Checked: the challenge (issued for a registration to this session, unexpired, unused); \
            `clientDataJSON` (`type` `webauthn.create`, `challenge`, `origin` one of `passkeys.origins`, `crossOrigin` not true); \
            `authenticatorData` (`rpIdHash` = SHA-256 of `passkeys.rp-id`, user present, user verified when \
            `passkeys.user-verification` is `required`, attested credential data, nothing left over); the attestation (`none`, or \
            `packed`: self attestation or an x5c certificate whose chain is not required to be trusted); the key (EC2 P-256, OKP \
            Ed25519 or RSA); `rawId` = the attested credential ID. Every refusal is 400 `invalid_passkey` saying which check failed. A \
            credential ID already registered, to any user, is 409 `passkey_exists`. `name` (default `Passkey`) is trimmed, 1 to 64 \
            characters. Audited (`passkey.add`); the user's verified address is mailed a notice.
            """,
        requestBody: PasskeyRegistrationRequest.self,
        requestExample: #"""
            {"challenge_id": "q1Zk8t3S0Yd2pGQeYQ9b0m3fX5v7Wc1uJ2nR4hT6kLA", "name": "iPhone", "credential": {"id": "AQIDBA", "rawId": "AQIDBA", "type": "public-key", "response": {"clientDataJSON": "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIn0", "attestationObject": "o2NmbXRkbm9uZQ"}}}
            """#,
        outcomes: [
            .init(201, "The passkey was added.", body: PasskeyResponse.self),
            .badRequest("Malformed body or field (`invalid_request`), or the credential or its challenge did not verify (`invalid_passkey`)."),
            .forbidden("Not a user's session (`forbidden`)."),
            .conflict("This credential is registered already (`passkey_exists`)."), .tooLarge, .unavailable,
        ])

    static let authenticationOptions = APIOperation(
        .post, "/api/v1/passkeys/authenticate/options", id: "passkeyAuthenticationOptions", tag: "Passkeys",
        summary: "Start signing in with a passkey",
        description: """
            Options for `navigator.credentials.get()` (`PublicKeyCredential.parseRequestOptionsFromJSON`) or \
            `ASAuthorizationPlatformPublicKeyCredentialProvider.createCredentialAssertionRequest`, as WebAuthn Level 3's \
            `PublicKeyCredentialRequestOptionsJSON`: a `challenge` of 32 random bytes, `rpId`, `userVerification`, `timeout` \
            (milliseconds) and an empty `allowCredentials` (passkeys are discoverable: the authenticator offers those it holds for \
            the site). Send `challenge_id` back with the assertion to `POST /api/v1/passkeys/authenticate` within \
            `passkeys.challenge-lifetime` seconds (300), once. No authentication.
            """,
        outcomes: [
            .init(200, "The options and their `challenge_id`.", body: PasskeyAuthenticationOptionsResponse.self, headers: ["Cache-Control"]),
            .unavailable,
        ])

    static let authenticate = APIOperation(
        .post, "/api/v1/passkeys/authenticate", id: "signInWithPasskey", tag: "Passkeys", summary: "Sign in with a passkey",
        description: """
            `{challenge_id, credential, device_id?}`: `credential` is the `AuthenticationResponseJSON` of `navigator.credentials.get()`. \
            The challenge is spent by this request whatever its outcome. Checked: the challenge (issued for an authentication, \
            unexpired, unused); the credential ID (`rawId`) names a passkey (else 401 `unknown_credential`: unknown, removed, or its \
            user deleted); `userHandle`, when sent, is the base64url of the passkey's user UUID bytes; `clientDataJSON` (`type` \
            `webauthn.get`, `challenge`, `origin`, `crossOrigin`), `authenticatorData` (`rpIdHash`, user present, user verified when \
            required) and the signature over `authenticatorData ‖ SHA-256(clientDataJSON)` with the stored key; the signature counter: \
            once the stored one is above 0, the new one must be greater (a cloned authenticator: refused and audited as \
            `passkey.clone_suspected`). Every refusal is 400 `invalid_passkey` saying which check failed.

            Answers the usual token pair for the passkey's user: the same user ID on any device. With user verification the access \
            token says `amr: ["hwk", "user"]` and `aal: "aal2"` (possession and inherence: a second factor is not asked for); without \
            it (`passkeys.user-verification` `preferred`) `amr: ["hwk"]`, one factor, and a user with a confirmed second factor gets \
            403 `mfa_required`. A DPoP proof binds the session to its key, as at register-device. `device_id` (this device's UUID) \
            joins the device to the user's devices, bound to the proof's key when one came (a new device without one gets a \
            `device_secret`, once); a device ID of another user is 409 `device_id_claimed`, a deleted user's 409 `user_deleted`. The \
            counter, the device and the session are written in one transaction. Audited (`passkey.sign_in`).
            """,
        requestBody: PasskeyAuthenticationRequest.self,
        requestExample: #"""
            {"challenge_id": "q1Zk8t3S0Yd2pGQeYQ9b0m3fX5v7Wc1uJ2nR4hT6kLA", "device_id": "0F8FAD5B-D9CB-469F-A165-70867728950E", "credential": {"id": "AQIDBA", "rawId": "AQIDBA", "type": "public-key", "response": {"clientDataJSON": "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0", "authenticatorData": "SZYN5YgO", "signature": "MEUCIQ", "userHandle": "X3Yc8wqRRkOzBZBlOlBVfA"}}}
            """#,
        outcomes: [
            .init(200, "A new session for the passkey's user.", body: TokenPairResponse.self, headers: ["Cache-Control"]),
            .badRequest(
                "Malformed body or field (`invalid_request`, `invalid_uuid`), a DPoP proof refused (`invalid_dpop_proof`), or the assertion "
                    + "or its challenge did not verify (`invalid_passkey`)."),
            .init(401, "`unknown_credential`: no passkey with this credential ID (removed, or its user deleted).", headers: ["WWW-Authenticate"]),
            .secondFactorRequired(), .conflict("The device ID cannot join this user (`device_id_claimed`, `user_deleted`)."), .tooLarge,
            .unavailable,
        ])

    static let list = APIOperation(
        .get, "/api/v1/passkeys", id: "listPasskeys", tag: "Passkeys", summary: "The user's passkeys",
        description: "The Bearer's user's passkeys, oldest first: name, when added, when last used to sign in, and whether synced (`backed_up`).",
        outcomes: [.init(200, "The passkeys.", body: PasskeyListResponse.self), .forbidden("A guest token (`forbidden`)."), .unavailable])

    static let rename = APIOperation(
        .patch, "/api/v1/passkeys/{id}", id: "renamePasskey", tag: "Passkeys", summary: "Rename a passkey",
        description: "`{name}`: trimmed, 1 to 64 characters.",
        parameters: [.init("id", in: .path, required: true, "The `passkey_id`.")], requestBody: PasskeyRenameRequest.self,
        requestExample: #"{"name": "Work laptop"}"#,
        outcomes: [
            .init(200, "The renamed passkey.", body: PasskeyResponse.self), .badRequest("Malformed body, or a name that is blank or too long."),
            .forbidden("A guest token (`forbidden`)."),
            .notFound("No passkey with this ID for this user (`not_found`), or passkeys are off (`passkeys_disabled`)."), .tooLarge,
            .unavailable,
        ])

    static let delete = APIOperation(
        .delete, "/api/v1/passkeys/{id}", id: "deletePasskey", tag: "Passkeys", summary: "Remove a passkey",
        description: """
            Removes the passkey: it signs in no more (the authenticator still holds it until the person deletes it there). Sessions it \
            started go on; nothing else is revoked. Needs a recent sign-in (or a DPoP proof with the session's key), and for a user \
            with a confirmed second factor a step-up within `mfa.step-up-lifetime`. Audited (`passkey.remove`); the user's verified \
            address is mailed a notice.
            """,
        parameters: [.init("id", in: .path, required: true, "The `passkey_id`.")],
        outcomes: [
            .init(204, "Removed."),
            .forbidden(
                "A guest token or an access code (`forbidden`), no recent sign-in (`reauthentication_required`), or no recent step-up "
                    + "(`aal2_required`)."),
            .notFound("No passkey with this ID for this user (`not_found`), or passkeys are off (`passkeys_disabled`)."), .unavailable,
        ])
}

import Foundation
import LatchkeyAPI
import Testing

/// Wire types that carry credentials never print them: not in `description`, `debugDescription`,
/// string interpolation or `dump`.
@Suite struct WireRedactionTests {
    static let secret = "SECRET-0123456789abcdef"

    static let values: [(String, any Sendable)] = [
        ("RegisterDeviceRequest", RegisterDeviceRequest(deviceID: "3f2504e0-4f89-11d3-9a0c-0305e82c3301", deviceSecret: secret)),
        ("RefreshRequest", RefreshRequest(refreshToken: secret)),
        ("AccessCodeExchangeRequest", AccessCodeExchangeRequest(accessCode: secret)),
        (
            "TokenPairResponse",
            TokenPairResponse(
                accessToken: secret, expiresIn: 900, refreshToken: secret, refreshTokenExpiresIn: 100, userID: "u", sessionID: "s",
                deviceSecret: secret)
        ),
        ("AppleSignInRequest", AppleSignInRequest(identityToken: secret, rawNonce: secret, authorizationCode: secret)),
        ("TokenExchangeRequest", TokenExchangeRequest(subjectToken: secret)),
        (
            "StorageCredentials",
            StorageCredentials(
                accessKeyID: secret, secretAccessKey: secret, sessionToken: secret, expiration: Date(timeIntervalSince1970: 1_800_000_000),
                expiresIn: 3600, bucket: "photos", region: "us-east-1", endpoint: "https://s3.us-east-1.amazonaws.com", prefix: "users/u/")
        ),
        (
            "PresignedURL",
            PresignedURL(
                url: "https://s3.us-east-1.amazonaws.com/photos/users/u/a.jpg?X-Amz-Signature=\(secret)", method: .get, headers: [:],
                expiresAt: Date(timeIntervalSince1970: 1_800_000_000))
        ),
        ("EmailRegistrationRequest", EmailRegistrationRequest(email: "\(secret)@example.com", password: secret)),
        ("PasswordLoginRequest", PasswordLoginRequest(email: "\(secret)@example.com", password: secret)),
        ("VerifyEmailRequest", VerifyEmailRequest(email: "\(secret)@example.com", code: secret)),
        ("VerifyEmailRequest by link", VerifyEmailRequest(token: secret)),
        ("ResetPasswordConfirmRequest", ResetPasswordConfirmRequest(email: "\(secret)@example.com", code: secret, newPassword: secret)),
        ("ResetPasswordConfirmRequest by link", ResetPasswordConfirmRequest(token: secret, newPassword: secret)),
        ("ChangePasswordRequest", ChangePasswordRequest(currentPassword: secret, newPassword: secret)),
        (
            "MFARequiredResponse",
            MFARequiredResponse(
                error: .init(code: .mfaRequired, message: "Second factor."), mfaToken: secret, factors: [.init(id: "f-1", type: .totp)])
        ),
        (
            "TOTPEnrollmentResponse",
            TOTPEnrollmentResponse(factorID: "f-1", secret: secret, otpauthURI: "otpauth://totp/Latchkey:a@example.com?secret=\(secret)")
        ),
        ("MFACodeRequest", MFACodeRequest(code: secret)),
        ("MFAVerifyRequest", MFAVerifyRequest(mfaToken: secret, code: secret)),
        ("MFAVerifyRequest with a recovery code", MFAVerifyRequest(recoveryCode: secret)),
        ("RecoveryCodesResponse", RecoveryCodesResponse(recoveryCodes: [secret, secret])),
    ]

    @Test(arguments: values.map(\.0))
    func credentialsNeverPrint(type: String) {
        let value = Self.values.first { $0.0 == type }!.1
        var dumped = ""
        dump(value, to: &dumped)
        for text in [String(describing: value), String(reflecting: value), "\(value)", dumped] {
            #expect(!text.contains(Self.secret), "\(type) printed its credential: \(text)")
            #expect(text.contains(type.split(separator: " ").first.map(String.init) ?? type))
        }
    }
}

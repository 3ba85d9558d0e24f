import Foundation
import LatchkeyAPI
import Testing

@testable import LatchkeyClient

/// Issue 33, the SDK's plain code around AuthenticationServices, run here on every platform: the options as the bytes
/// a platform authenticator takes, its credentials as the server's JSON, and which of its failures an app can act on.
@Suite struct PasskeyCredentialTests {
    @Test func aNewCredentialIsBase64URLWithTheCredentialIDAsBothIDs() throws {
        let credential = RegistrationResponseJSON(
            credentialID: Data([0xfb, 0xff, 0x01]), clientDataJSON: Data("{\"a\":1}".utf8), attestationObject: Data([0xa0, 0xfe]))

        #expect(credential.id == "-_8B")
        #expect(credential.rawId == "-_8B")
        #expect(credential.type == "public-key")
        #expect(credential.authenticatorAttachment == "platform")
        #expect(credential.response.clientDataJSON == Base64URL.encode(Data("{\"a\":1}".utf8)))
        #expect(credential.response.attestationObject == "oP4")
        let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(credential)) as? [String: Any])
        #expect(Set(json.keys) == ["id", "rawId", "type", "response", "authenticatorAttachment"])
    }

    @Test func anAssertionCarriesItsUserHandleAndLeavesAnEmptyOneOut() {
        let assertion = AuthenticationResponseJSON(
            credentialID: Data([1]), clientDataJSON: Data([2]), authenticatorData: Data([3]), signature: Data([4]), userHandle: Data([5, 6]))
        #expect(assertion.id == "AQ")
        #expect(assertion.rawId == "AQ")
        #expect(assertion.response == .init(clientDataJSON: "Ag", authenticatorData: "Aw", signature: "BA", userHandle: "BQY"))
        let anonymous = AuthenticationResponseJSON(
            credentialID: Data([1]), clientDataJSON: Data([2]), authenticatorData: Data([3]), signature: Data([4]), userHandle: Data())
        #expect(anonymous.response.userHandle == nil)
    }

    @Test func creationOptionsBecomeTheBytesARegistrationRequestTakes() throws {
        let parameters = try PasskeyCreationParameters(PasskeyTests.creationOptions.options)
        #expect(parameters.relyingPartyID == "example.com")
        #expect(parameters.challenge == Data(repeating: 1, count: 32))
        #expect(parameters.userID == Data(repeating: 7, count: 16))
        #expect(parameters.userName == "a@example.com")
        #expect(parameters.displayName == "a@example.com")
        #expect(parameters.userVerification == "required")
        #expect(parameters.attestation == "none")
        #expect(parameters.excludedCredentialIDs == [Data([9, 9, 9])])
    }

    @Test func requestOptionsBecomeTheBytesAnAssertionRequestTakes() throws {
        let parameters = try PasskeyAssertionParameters(PasskeyTests.requestOptions.options)
        #expect(parameters.relyingPartyID == "example.com")
        #expect(parameters.challenge == Data(repeating: 2, count: 32))
        #expect(parameters.userVerification == "required")
        #expect(parameters.allowedCredentialIDs.isEmpty)
    }

    @Test func optionsThatAreNotBase64URLAreAnAnswerThatCannotBeRead() {
        var options = PasskeyTests.creationOptions.options
        options.user.id = "not base64url!"
        #expect(throws: LatchkeyError.invalidResponse) { try PasskeyCreationParameters(options) }
        var request = PasskeyTests.requestOptions.options
        request.challenge = "a+b/"
        #expect(throws: LatchkeyError.invalidResponse) { try PasskeyAssertionParameters(request) }
    }

    // MARK: AuthenticationServices' failures

    @Test(arguments: [
        (1001, false, ErrorCode.passkeyCancelled),
        (1001, true, .noPasskeyCredentials),
        (1005, false, .noPasskeyCredentials),
        (1005, true, .noPasskeyCredentials),
        (1006, false, .passkeyExists),
    ])
    func aFailureTheAppCanActOnHasItsCode(code: Int, onlyImmediatelyAvailable: Bool, expected: ErrorCode) {
        let error = PasskeyAuthorizationFailure.latchkeyError(code: code, texts: ["x"], onlyImmediatelyAvailable: onlyImmediatelyAvailable)
        #expect(error == .rejected(.init(code: expected, message: ErrorMessages.english(expected))))
        #expect(error?.description == ErrorMessages.english["error.\(expected.rawValue)"])
    }

    @Test func aFailedRequestThatSaysTheAppIsNotAssociatedIsNotAssociatedWithTheSystemsWords() {
        let words = "Application with identifier ABCDE12345.com.example.mystica is not associated with domain example.com"
        let error = PasskeyAuthorizationFailure.latchkeyError(
            code: 1004, texts: ["The operation couldn’t be completed.", words], onlyImmediatelyAvailable: false)
        #expect(error == .rejected(.init(code: .passkeyNotAssociated, message: words)))
        #expect(error?.description == "Passkeys are not set up for this app yet: it is not associated with the server's domain.")
        let unverified = "Unable to verify webcredentials association of ABCDE12345.com.example.mystica with domain example.com."
        #expect(
            PasskeyAuthorizationFailure.latchkeyError(code: 1004, texts: [unverified], onlyImmediatelyAvailable: false)?.code == .passkeyNotAssociated
        )
    }

    @Test func otherFailuresAreLeftToTheSystemsError() {
        #expect(PasskeyAuthorizationFailure.latchkeyError(code: 1004, texts: ["iCloud Keychain is off."], onlyImmediatelyAvailable: false) == nil)
        for code in [1000, 1002, 1003] {
            #expect(PasskeyAuthorizationFailure.latchkeyError(code: code, texts: ["not associated with"], onlyImmediatelyAvailable: true) == nil)
        }
    }
}

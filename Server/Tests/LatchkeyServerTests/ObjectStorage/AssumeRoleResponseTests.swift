import Foundation
import LatchkeyServer
import Testing

/// Reading STS's temporary credentials.
struct AssumeRoleResponseTests {
    @Test func readsTheCredentialsAndTheRoleOfAWSsExample() throws {
        let response = try AssumeRoleResponse.parse(ObjectStorageXMLSamples.assumeRole)
        #expect(response.accessKeyID == "ASIAIOSFODNN7EXAMPLE")
        #expect(response.secretAccessKey == "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY")
        #expect(response.sessionToken.hasPrefix("AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmx"))
        #expect(response.sessionToken.hasSuffix("+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="))
        #expect(!response.sessionToken.contains { $0.isWhitespace })
        #expect(response.expiration == Date(timeIntervalSince1970: 1_573_306_481))
        #expect(response.assumedRoleARN == "arn:aws:sts::123456789012:assumed-role/demo/TestAR")
        #expect(response.assumedRoleID == "ARO123EXAMPLE123:TestAR")
    }

    @Test func readsMinIOsWebIdentityAnswerWithFractionalSeconds() throws {
        let response = try AssumeRoleResponse.parse(ObjectStorageXMLSamples.assumeRoleWithWebIdentity)
        #expect(response.accessKeyID == "Y4RJU1RNFGK48LGO9I2S")
        #expect(response.sessionToken == "eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9.e30.sig")
        #expect(abs(response.expiration.timeIntervalSince1970 - 1_565_295_972.359) < 0.001)
        #expect(response.assumedRoleARN == nil)
    }

    @Test func throwsTheErrorDocumentItIsGiven() {
        #expect(throws: AWSErrorResponse.self) { try AssumeRoleResponse.parse(ObjectStorageXMLSamples.stsError) }
        #expect(throws: AWSErrorResponse.self) { try AssumeRoleResponse.parse(ObjectStorageXMLSamples.s3Error) }
    }

    @Test func refusesAResponseWithoutASessionToken() throws {
        let text = String(decoding: ObjectStorageXMLSamples.assumeRoleWithWebIdentity, as: UTF8.self)
            .replacingOccurrences(of: "<SessionToken>eyJhbGciOiJIUzUxMiIsInR5cCI6IkpXVCJ9.e30.sig</SessionToken>", with: "")
        let error = try #require(throws: ObjectStorageResponseError.self) { try AssumeRoleResponse.parse(Data(text.utf8)) }
        #expect(error.code == .missingElement)
        #expect(error.message.contains("AssumeRoleWithWebIdentityResponse/AssumeRoleWithWebIdentityResult/Credentials/SessionToken"))
    }

    @Test func refusesAnExpirationThatIsNoDateWithoutShowingTheSecrets() throws {
        let text = String(decoding: ObjectStorageXMLSamples.assumeRole, as: UTF8.self)
            .replacingOccurrences(of: "2019-11-09T13:34:41Z", with: "next tuesday")
        let error = try #require(throws: ObjectStorageResponseError.self) { try AssumeRoleResponse.parse(Data(text.utf8)) }
        #expect(error.code == .invalidValue)
        #expect(!"\(error)".contains("wJalrXUtnFEMI"))
    }

    @Test func refusesOtherDocuments() {
        #expect { try AssumeRoleResponse.parse(ObjectStorageXMLSamples.listObjects) } throws: {
            ($0 as? ObjectStorageResponseError)?.code == .unexpectedDocument
        }
    }

    @Test func neverPrintsTheSecretKeyOrTheSessionToken() throws {
        let response = try AssumeRoleResponse.parse(ObjectStorageXMLSamples.assumeRole)
        var dumped = ""
        dump(response, to: &dumped)
        for text in ["\(response)", String(reflecting: response), dumped] {
            #expect(text.contains("ASIAIOSFODNN7EXAMPLE"))
            #expect(!text.contains("wJalrXUtnFEMI"))
            #expect(!text.contains("AQoDYXdzEPT"))
        }
    }
}

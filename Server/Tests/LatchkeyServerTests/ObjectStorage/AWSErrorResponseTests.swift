import Foundation
import LatchkeyServer
import Testing

/// Reading the error documents of STS, S3 and S3-compatible servers.
struct AWSErrorResponseTests {
    @Test func readsSTSsErrorResponse() throws {
        let error = try AWSErrorResponse.parse(ObjectStorageXMLSamples.stsError)
        #expect(error.code == "AccessDenied")
        #expect(error.type == "Sender")
        #expect(error.message.hasPrefix("User: arn:aws:iam::123456789012:user/latchkey is not authorized to perform: sts:AssumeRole"))
        #expect(error.requestID == "4a5c2b1e-7d3c-11e9-8f9e-2a86e4085a59")
    }

    @Test func readsS3sBareError() throws {
        let error = try AWSErrorResponse.parse(ObjectStorageXMLSamples.s3Error)
        #expect(error == AWSErrorResponse(code: "NoSuchKey", message: "The resource you requested does not exist", requestID: "4442587FB7D0A2F9"))
        #expect("\(error)" == "NoSuchKey: The resource you requested does not exist (request 4442587FB7D0A2F9)")
    }

    @Test func readsAnErrorWithoutMessageAndWithNamespacePrefixes() throws {
        let bare = try AWSErrorResponse.parse(Data("<Error><Code>InvalidAccessKeyId</Code></Error>".utf8))
        #expect(bare == AWSErrorResponse(code: "InvalidAccessKeyId", message: ""))
        let prefixed = try AWSErrorResponse.parse(
            Data(
                #"<s:ErrorResponse xmlns:s="https://sts.amazonaws.com/doc/2011-06-15/"><s:Error><s:Code>ExpiredToken</s:Code></s:Error>"#
                    .appending("</s:ErrorResponse>").utf8))
        #expect(prefixed.code == "ExpiredToken")
    }

    @Test func refusesAnErrorWithoutCode() throws {
        let error = try #require(throws: ObjectStorageResponseError.self) {
            try AWSErrorResponse.parse(Data("<ErrorResponse><Error><Message>no code</Message></Error></ErrorResponse>".utf8))
        }
        #expect(error.code == .missingElement)
        #expect(error.message.contains("ErrorResponse/Error/Code"))
    }

    @Test func refusesDocumentsThatAreNoError() {
        #expect { try AWSErrorResponse.parse(ObjectStorageXMLSamples.listObjects) } throws: {
            ($0 as? ObjectStorageResponseError)?.code == .unexpectedDocument
        }
    }

    @Test(
        arguments: [
            "", "not xml at all", "<Error><Code>x</Code>", "<Error><Code>x</Error></Code>", "<Error>&undefined;</Error>", "<?xml version=\"1.0\"?>",
            "<a></a><b></b>", "<a></a>trailing", String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000),
        ]
    )
    func refusesMalformedXMLWithAnError(body: String) {
        #expect { try AWSErrorResponse.parse(Data(body.utf8)) } throws: {
            ($0 as? ObjectStorageResponseError)?.code == .malformedXML
        }
    }
}

import Foundation
import LatchkeySigV4
import Testing

/// AWS's published examples, hard-coded: the numbers come from the documentation, not from this signer
/// (botocore 1.43 computes the same ones).
struct AWSDocumentationExampleTests {
    static func exampleSigner(service: String = "s3", accessKeyID: String, secretAccessKey: String) -> SigV4Signer {
        SigV4Signer(region: "us-east-1", service: service, credentials: AWSCredentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey))
    }

    /// 2013-05-24T00:00:00Z, the time of the S3 examples.
    static let may24th2013 = Date(timeIntervalSince1970: 1_369_353_600)

    /// S3 API reference, "Signature Calculations for the Authorization Header: Transferring Payload in a Single Chunk",
    /// example GET Object.
    @Test func s3HeaderSignedGetObject() throws {
        let signer = Self.exampleSigner(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
        let signed = try signer.sign(
            method: "GET", url: URL(string: "https://examplebucket.s3.amazonaws.com/test.txt")!, headers: ["Range": "bytes=0-9"],
            payload: .empty, date: Self.may24th2013)

        #expect(
            signed.canonicalRequest == """
                GET
                /test.txt

                host:examplebucket.s3.amazonaws.com
                range:bytes=0-9
                x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                x-amz-date:20130524T000000Z

                host;range;x-amz-content-sha256;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """)
        #expect(
            signed.stringToSign == """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
                """)
        #expect(signed.signature == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(
            signed.headers["Authorization"]
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        #expect(signed.headers["X-Amz-Date"] == "20130524T000000Z")
        #expect(signed.headers["X-Amz-Content-Sha256"] == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(signed.headers["X-Amz-Security-Token"] == nil)
    }

    /// S3 API reference, "Authenticating Requests: Using Query Parameters (AWS Signature Version 4)", example
    /// presigned URL.
    @Test func s3PresignedGetObject() throws {
        let signer = Self.exampleSigner(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
        let url = try signer.presign(
            method: "GET", url: URL(string: "https://examplebucket.s3.amazonaws.com/test.txt")!, expiresAfter: 86400, date: Self.may24th2013)

        #expect(
            url.absoluteString
                == "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z"
                + "&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
                + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
        let presigned = try signer.presignedRequest(
            method: "GET", url: URLComponents(string: "https://examplebucket.s3.amazonaws.com/test.txt")!, expiresAfter: 86400,
            date: Self.may24th2013)
        #expect(presigned.stringToSign.hasSuffix("\n3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04"))
    }

    /// General reference, "Signature Version 4 signing process" example: IAM `ListUsers`, a service that is not S3.
    @Test func iamListUsers() throws {
        let signer = Self.exampleSigner(service: "iam", accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
        let signed = try signer.sign(
            method: "GET", url: URL(string: "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08")!,
            headers: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"], payload: .empty,
            date: Date(timeIntervalSince1970: 1_440_938_160))

        #expect(signed.headers["X-Amz-Date"] == "20150830T123600Z")
        #expect(signed.headers["X-Amz-Content-Sha256"] == nil)
        #expect(
            signed.headers["Authorization"]
                == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, "
                + "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7")
    }
}

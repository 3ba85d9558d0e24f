import Foundation
import LatchkeySigV4
import Testing

/// Credentials never print their secrets.
struct AWSCredentialsRedactionTests {
    @Test func interpolationReflectionAndDumpShowOnlyTheAccessKeyID() {
        let credentials = AWSCredentials(
            accessKeyID: "ASIAEXAMPLEKEYID", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", sessionToken: "FwoGZXIvYXdzSESSIONTOKEN")
        var dumped = ""
        dump(credentials, to: &dumped)
        let signer = SigV4Signer(region: "us-east-1", service: "s3", credentials: credentials)
        var dumpedSigner = ""
        dump(signer, to: &dumpedSigner)
        for text in ["\(credentials)", String(reflecting: credentials), String(describing: credentials), dumped, "\(signer)", dumpedSigner] {
            #expect(text.contains("ASIAEXAMPLEKEYID"))
            #expect(!text.contains("wJalrXUtnFEMI"))
            #expect(!text.contains("FwoGZXIvYXdz"))
        }
    }

    @Test func aSignedRequestDoesNotPrintTheSessionToken() throws {
        let credentials = AWSCredentials(accessKeyID: "ASIAEXAMPLEKEYID", secretAccessKey: "secret", sessionToken: "FwoGZXIvYXdzSESSIONTOKEN")
        let signer = SigV4Signer(region: "us-east-1", service: "s3", credentials: credentials)
        let signed = try signer.sign(method: "GET", url: URL(string: "https://h/k?a=1")!, payload: .empty, date: Date())
        #expect(signed.headers["X-Amz-Security-Token"] == "FwoGZXIvYXdzSESSIONTOKEN")
        var dumped = ""
        dump(signed, to: &dumped)
        for text in ["\(signed)", String(reflecting: signed), dumped] {
            #expect(text.contains("X-Amz-Security-Token"))
            #expect(!text.contains("FwoGZXIvYXdz"))
        }
    }
}

import Foundation
import LatchkeyServer
import Testing

/// Reading pages of S3's ListObjectsV2.
struct ListObjectsResultTests {
    @Test func readsAPageThatIsNotTruncated() throws {
        let page = try ListObjectsResult.parse(ObjectStorageXMLSamples.listObjects)
        #expect(page.bucket == "bucket")
        #expect(page.prefix == "")
        #expect(page.keyCount == 2)
        #expect(page.maxKeys == 1000)
        #expect(!page.isTruncated)
        #expect(page.nextContinuationToken == nil)
        #expect(page.commonPrefixes.isEmpty)
        #expect(
            page.contents == [
                ListObjectsResult.Object(
                    key: "my-image.jpg", size: 434_234, lastModified: Date(timeIntervalSince1970: 1_255_369_830),
                    eTag: "fba9dede5f27731c9771645a39863328", storageClass: "STANDARD"),
                ListObjectsResult.Object(
                    key: "my-third-image.jpg", size: 64_994, lastModified: Date(timeIntervalSince1970: 1_255_369_830),
                    eTag: "1b2cf535f27731c974343645a3985328", storageClass: "STANDARD_IA"),
            ])
    }

    @Test func readsATruncatedPageAndItsContinuationToken() throws {
        let page = try ListObjectsResult.parse(ObjectStorageXMLSamples.truncatedListObjects)
        #expect(page.isTruncated)
        #expect(page.nextContinuationToken == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
        #expect(page.contents.map(\.key) == ["happyface.jpg"])
        #expect(page.contents.first?.size == 11)
    }

    @Test func readsCommonPrefixes() throws {
        let page = try ListObjectsResult.parse(ObjectStorageXMLSamples.commonPrefixes)
        #expect(page.prefix == "photos/2006/")
        #expect(page.delimiter == "/")
        #expect(page.commonPrefixes == ["photos/2006/February/", "photos/2006/January/"])
        #expect(page.contents.map(\.key) == ["photos/2006/"])
        #expect(page.contents.first?.size == 0)
    }

    @Test func keepsKeysExactlyAndDecodesThemWhenURLEncoded() throws {
        let plain = try ListObjectsResult.parse(Self.page(key: "  spaced key &amp; <![CDATA[a+b]]>  ", encodingType: nil))
        #expect(plain.contents.first?.key == "  spaced key & a+b  ")
        let encoded = try ListObjectsResult.parse(Self.page(key: "users/42/caf%C3%A9+au+lait%2B.txt", encodingType: "url"))
        #expect(encoded.contents.first?.key == "users/42/café au lait+.txt")
        #expect(encoded.commonPrefixes == ["a b/"])
    }

    @Test func refusesATruncatedPageWithoutContinuationToken() throws {
        let text = String(decoding: ObjectStorageXMLSamples.truncatedListObjects, as: UTF8.self)
            .replacingOccurrences(of: "<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>", with: "")
        let error = try #require(throws: ObjectStorageResponseError.self) { try ListObjectsResult.parse(Data(text.utf8)) }
        #expect(error.code == .missingElement)
    }

    @Test(
        arguments: [
            ("<Size>434234</Size>", "<Size>big</Size>", ObjectStorageResponseError.Code.invalidValue),
            ("<Size>434234</Size>", "", .missingElement),
            ("<Key>my-image.jpg</Key>", "", .missingElement),
            ("<IsTruncated>false</IsTruncated>", "<IsTruncated>maybe</IsTruncated>", .invalidValue),
            ("<IsTruncated>false</IsTruncated>", "", .missingElement),
            ("<LastModified>2009-10-12T17:50:30.000Z</LastModified>", "<LastModified>yesterday</LastModified>", .invalidValue),
            ("</ListBucketResult>", "", .malformedXML),
        ]
    )
    func refusesAPageMissingOrMangling(replacing original: String, with replacement: String, code: ObjectStorageResponseError.Code) throws {
        let text = String(decoding: ObjectStorageXMLSamples.listObjects, as: UTF8.self)
        let mangled = text.replacingOccurrences(of: original, with: replacement)
        #expect(mangled != text)
        let error = try #require(throws: ObjectStorageResponseError.self) { try ListObjectsResult.parse(Data(mangled.utf8)) }
        #expect(error.code == code)
    }

    @Test func throwsTheErrorDocumentItIsGiven() throws {
        let error = try #require(throws: AWSErrorResponse.self) { try ListObjectsResult.parse(ObjectStorageXMLSamples.s3Error) }
        #expect(error.code == "NoSuchKey")
    }

    static func page(key: String, encodingType: String?) -> Data {
        Data(
            """
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">\
            \(encodingType.map { "<EncodingType>\($0)</EncodingType>" } ?? "")<Name>b</Name><IsTruncated>false</IsTruncated>\
            <Contents><Key>\(key)</Key><LastModified>2024-01-01T00:00:00Z</LastModified><Size>1</Size></Contents>\
            <CommonPrefixes><Prefix>a+b/</Prefix></CommonPrefixes></ListBucketResult>
            """.utf8)
    }
}

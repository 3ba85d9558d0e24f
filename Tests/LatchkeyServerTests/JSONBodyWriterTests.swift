import Foundation
import LatchkeyAPI
import LatchkeyServer
import NIOCore
import Testing

/// The answers that write their own JSON write exactly what the response encoder's `JSONEncoder` would.
struct JSONBodyWriterTests {
    /// Every ASCII character (the control ones, quotes, backslashes, slashes), and text beyond ASCII.
    // availability: everywhere
    static let awkwardStrings = [
        String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self), "plain", "", "https://h:1/b/users/u/a%20b.jpg?X-Amz-Signature=ab",
        "\"quoted\" \\ back/slash", "é ü ß 日本 🙂 \u{2028}\u{2029} \u{7f}\u{80}\u{9f}", "Content-Type", "tab\there\nline",
    ]

    // availability: everywhere
    static let dates = [
        Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_795_000_000.999), Date(timeIntervalSince1970: 951_868_799.5),
        Date(timeIntervalSince1970: 4_102_444_800), Date(timeIntervalSince1970: -1),
    ]

    @available(LatchkeyServer 1.0, *)
    static func expectSameBytes<Value: JSONBodyWritable>(_ value: Value, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = String(decoding: try LatchkeyResponseEncoder.jsonEncoder().encode(value), as: UTF8.self)
        let written = String(buffer: value.jsonBody())
        #expect(written == expected, sourceLocation: sourceLocation)
    }

    @available(LatchkeyServer 1.0, *)
    @Test(arguments: awkwardStrings)
    func aPresignedURLIsWrittenAsJSONEncoderWritesIt(text: String) throws {
        for date in Self.dates {
            for headers in [[:], ["Content-Type": text], ["b": "2", "B": "1", "a": text, "Content-Type": "image/jpeg"]] {
                try Self.expectSameBytes(PresignedURL(url: text, method: .put, headers: headers, expiresAt: date))
            }
        }
    }

    @available(LatchkeyServer 1.0, *)
    @Test(arguments: awkwardStrings)
    func storageCredentialsAreWrittenAsJSONEncoderWritesThem(text: String) throws {
        for (index, date) in Self.dates.enumerated() {
            try Self.expectSameBytes(
                StorageCredentials(
                    accessKeyID: text, secretAccessKey: "s/" + text, sessionToken: text + "==", expiration: date, expiresIn: index * 1000 - 1,
                    bucket: text, region: "us-east-1", endpoint: text, prefix: "users/\(text)/"))
        }
    }

}

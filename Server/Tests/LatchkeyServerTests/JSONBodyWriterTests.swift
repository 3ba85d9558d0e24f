import Foundation
import LatchkeyAPI
import LatchkeyServer
import NIOCore
import Testing

/// The answers that write their own JSON write exactly what the response encoder's `JSONEncoder` would.
struct JSONBodyWriterTests {
    /// Every ASCII character (the control ones, quotes, backslashes, slashes), and text beyond ASCII.
    static let awkwardStrings = [
        String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self), "plain", "", "https://h:1/b/users/u/a%20b.jpg?X-Amz-Signature=ab",
        "\"quoted\" \\ back/slash", "é ü ß 日本 🙂 \u{2028}\u{2029} \u{7f}\u{80}\u{9f}", "Content-Type", "tab\there\nline",
    ]

    static let dates = [
        Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_795_000_000.999), Date(timeIntervalSince1970: 951_868_799.5),
        Date(timeIntervalSince1970: 4_102_444_800), Date(timeIntervalSince1970: -1),
    ]

    static func expectSameBytes<Value: JSONBodyWritable>(_ value: Value, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = String(decoding: try LatchkeyResponseEncoder.jsonEncoder().encode(value), as: UTF8.self)
        let written = String(buffer: value.jsonBody())
        #expect(written == expected, sourceLocation: sourceLocation)
    }

    @Test(arguments: awkwardStrings)
    func aPresignedURLIsWrittenAsJSONEncoderWritesIt(text: String) throws {
        for date in Self.dates {
            for headers in [[:], ["Content-Type": text], ["b": "2", "B": "1", "a": text, "Content-Type": "image/jpeg"]] {
                try Self.expectSameBytes(PresignedURL(url: text, method: .put, headers: headers, expiresAt: date))
            }
        }
    }

    @Test(arguments: awkwardStrings)
    func storageCredentialsAreWrittenAsJSONEncoderWritesThem(text: String) throws {
        for (index, date) in Self.dates.enumerated() {
            try Self.expectSameBytes(
                StorageCredentials(
                    accessKeyID: text, secretAccessKey: "s/" + text, sessionToken: text + "==", expiration: date, expiresIn: index * 1000 - 1,
                    bucket: text, region: "us-east-1", endpoint: text, prefix: "users/\(text)/"))
        }
    }

    static let numbers: [Double] = [
        0, 100, 2.75, 0.1, 1e-5, 123_456_789.125, 1e15, 1e16, 1e21, 9_007_199_254_740_993, -3, -0.0, 0.3333333333333333, 5e-324,
        Double.greatestFiniteMagnitude,
    ]

    @Test(arguments: awkwardStrings)
    func aUserProfileIsWrittenAsJSONEncoderWritesIt(text: String) throws {
        var generator = SplitMix64(seed: UInt64(text.utf8.count))
        let randomNumbers =
            (0..<30).map { _ in Double(bitPattern: generator.next()) }.filter(\.isFinite)
            + (0..<30).map { _ in Double(Int.random(in: 0...1_000_000, using: &generator)) / 100 }
        for (index, number) in (Self.numbers + randomNumbers).enumerated() {
            let date = Self.dates[index % Self.dates.count]
            let full = UserProfile(
                userID: text, kind: UserKind.allCases[index % UserKind.allCases.count], createdAt: date,
                tokenKind: TokenKind.allCases[index % TokenKind.allCases.count], sessionID: text,
                identities: [.init(provider: text, subject: "s", createdAt: date), .init(provider: "apple", subject: text, createdAt: date)],
                devices: [.init(deviceID: text, createdAt: date, lastSeenAt: date), .init(deviceID: "d", createdAt: date, lastSeenAt: nil)],
                budget: .init(limit: number, used: index.isMultiple(of: 2) ? number / 3 : 0, period: text), provider: text, providerSubject: text)
            try Self.expectSameBytes(full)
            try Self.expectSameBytes(
                UserProfile(userID: text, kind: .guest, createdAt: date, tokenKind: .guest, sessionID: nil, identities: [], devices: []))
        }
    }
}

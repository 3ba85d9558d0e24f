import Crypto
import Foundation
import LatchkeySigV4
import Testing

/// One request to sign both here and with botocore (Tests/interop/sigv4_vectors.py reads the encoded form).
///
/// `path` and `query` are the request's real (decoded) path and parameters: botocore encodes them as its serializer
/// does, and the Swift signer gets a `URLComponents` built from them by Foundation, or `rawURL` when the test wants
/// the signer to read an already-encoded URL that means the same.
struct SigningVector: Encodable, Sendable, CustomTestStringConvertible {
    var name: String
    var method = "GET"
    var endpoint = "https://examplebucket.s3.amazonaws.com"
    var path = "/"
    var query: [[String]] = []
    var headers: [[String]] = []
    /// The payload as base64, or `UNSIGNED`.
    var body = ""
    var service = "s3"
    var region = "us-east-1"
    var accessKey = "AKIDEXAMPLE"
    var secretKey = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    var sessionToken: String?
    var timestamp = "20240229T235959Z"
    var presignExpires: Int?
    /// Swift side only: the URL to give the signer instead of one Foundation builds from `path` and `query`.
    var rawURL: String?
    /// Swift side only: hand the payload to the signer as its precomputed hash.
    var payloadGivenAsHash = false
    /// Swift side only: sign with `signFormPost` (the body and `Content-Type` botocore gets are the signer's).
    var formParameters: [[String]]?
    /// Swift side only: a fraction of a second added to the signing time, which the timestamp must drop.
    var secondsFraction = 0.0

    enum CodingKeys: String, CodingKey {
        case name, method, endpoint, path, query, headers, body, service, region, timestamp
        case accessKey = "access_key"
        case secretKey = "secret_key"
        case sessionToken = "session_token"
        case presignExpires = "presign_expires"
    }

    var testDescription: String { self.name }

    /// `text` as the vector's base64 body.
    static func body(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    var credentials: AWSCredentials { AWSCredentials(accessKeyID: self.accessKey, secretAccessKey: self.secretKey, sessionToken: self.sessionToken) }

    var headerDictionary: [String: String] {
        Dictionary(self.headers.map { ($0[0], $0[1]) }, uniquingKeysWith: { first, _ in first })
    }

    /// The signing time: `timestamp` plus `secondsFraction`.
    var date: Date {
        let digits = Array(self.timestamp.utf8).filter { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.map { Int($0 - UInt8(ascii: "0")) }
        func number(_ range: Range<Int>) -> Int { digits[range].reduce(0) { $0 * 10 + $1 } }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let components = DateComponents(
            year: number(0..<4), month: number(4..<6), day: number(6..<8), hour: number(8..<10), minute: number(10..<12), second: number(12..<14))
        return calendar.date(from: components)!.addingTimeInterval(self.secondsFraction)
    }

    /// The URL the Swift signer gets.
    var components: URLComponents {
        if let rawURL = self.rawURL { return URLComponents(string: rawURL)! }
        var components = URLComponents(string: self.endpoint)!
        components.path = self.path
        components.queryItems = self.query.isEmpty ? nil : self.query.map { URLQueryItem(name: $0[0], value: $0[1]) }
        return components
    }

    /// The payload the Swift signer gets.
    var payload: SigV4Payload {
        guard self.body != "UNSIGNED" else { return .unsigned }
        let data = Data(base64Encoded: self.body)!
        return self.payloadGivenAsHash ? .hash(SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()) : .data(data)
    }
}

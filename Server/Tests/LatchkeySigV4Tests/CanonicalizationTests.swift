import Foundation
import LatchkeySigV4
import Testing

/// How the signer canonicalises a request, rule by rule.
struct CanonicalizationTests {
    static func signer(service: String = "s3", sessionToken: String? = nil) -> SigV4Signer {
        SigV4Signer(
            region: "us-east-1", service: service,
            credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret", sessionToken: sessionToken))
    }

    static func canonicalLines(service: String = "s3", _ url: String, headers: [String: String] = [:]) throws -> [Substring] {
        let signed = try Self.signer(service: service).sign(
            method: "get", url: URLComponents(string: url)!, headers: headers, payload: .empty, date: Date(timeIntervalSince1970: 0))
        return signed.canonicalRequest.split(separator: "\n", omittingEmptySubsequences: false)
    }

    @Test func encodesEveryByteButTheUnreservedOnesInUppercaseHex() {
        #expect(AWSURIEncoding.encode("AZaz09-_.~ /+=&%é") == "AZaz09-_.~%20%2F%2B%3D%26%25%C3%A9")
        #expect(AWSURIEncoding.reencode("a%7eb%2Fc+d%zz%FF") == "a~b%2Fc%2Bd%25zz%FF")
    }

    @Test func s3SignsThePathAsSentWhileOtherServicesEncodeItTwiceAndNormaliseIt() throws {
        let url = "https://host/a%20b/./c%2Fd//%C3%A9/"
        #expect(try Self.canonicalLines(url)[1] == "/a%20b/./c%2Fd//%C3%A9/")
        #expect(try Self.canonicalLines(service: "sts", url)[1] == "/a%2520b/c%252Fd/%25C3%25A9/")
        #expect(try Self.canonicalLines(service: "sts", "https://host")[1] == "/")
        #expect(try Self.canonicalLines(service: "sts", "https://host/a/b/../..")[1] == "/")
    }

    @Test func sortsQueryParametersByEncodedNameThenValueKeepingRepeatsAndEmptyValues() throws {
        let lines = try Self.canonicalLines("https://host/?b=2&a=z&a=y&B=1&acl&c=&d=%2b+%20")
        #expect(lines[0] == "GET")
        #expect(lines[2] == "B=1&a=y&a=z&acl=&b=2&c=&d=%2B%2B%20")
    }

    @Test func lowercasesHeaderNamesAndCollapsesWhitespaceInValues() throws {
        let lines = try Self.canonicalLines(
            "https://host/", headers: ["X-Amz-Meta-Note": "  a   b\t\tc  ", "User-Agent": "left out", "X-Amz-Date": "replaced"])
        #expect(lines.contains("x-amz-meta-note:a b c"))
        #expect(!lines.contains { $0.hasPrefix("user-agent") })
        #expect(lines.contains("x-amz-date:19700101T000000Z"))
    }

    @Test func signsTheHostWithItsPortUnlessItIsTheSchemesDefault() throws {
        #expect(try Self.canonicalLines("http://LocalHost:9000/b")[3] == "host:localhost:9000")
        #expect(try Self.canonicalLines("https://host:443/b")[3] == "host:host")
        #expect(try Self.canonicalLines("http://host:443/b")[3] == "host:host:443")
        #expect(try Self.canonicalLines("http://[::1]:8333/b")[3] == "host:[::1]:8333")
    }

    @Test func addsTheContentHashForS3AndTheSessionTokenForTemporaryCredentials() throws {
        let date = Date(timeIntervalSince1970: 0)
        let s3 = try Self.signer(sessionToken: "token").sign(method: "PUT", url: URL(string: "https://h/k")!, payload: .unsigned, date: date)
        #expect(s3.headers["X-Amz-Content-Sha256"] == "UNSIGNED-PAYLOAD")
        #expect(s3.headers["X-Amz-Security-Token"] == "token")
        #expect(s3.canonicalRequest.contains("x-amz-security-token:token\n"))
        let sts = try Self.signer(service: "sts").sign(method: "POST", url: URL(string: "https://sts.amazonaws.com/")!, payload: .empty, date: date)
        #expect(sts.headers["X-Amz-Content-Sha256"] == nil)
        #expect(Set(sts.headers.keys) == ["Authorization", "X-Amz-Date"])
    }

    @Test func sendsTheURLEncodedAsSigned() throws {
        var components = URLComponents(string: "http://minio:9000")!
        components.path = "/bucket/a b/c+d(e)"
        components.queryItems = [URLQueryItem(name: "z", value: "1+1"), URLQueryItem(name: "a", value: nil)]
        let signed = try Self.signer().sign(method: "GET", url: components, payload: .empty, date: Date())
        #expect(signed.url.absoluteString == "http://minio:9000/bucket/a%20b/c%2Bd%28e%29?a=&z=1%2B1")
    }

    @Test func signsAFormPostWithItsContentType() throws {
        let signed = try Self.signer(service: "sts").signFormPost(
            url: URL(string: "https://sts.amazonaws.com/")!,
            parameters: [URLQueryItem(name: "Action", value: "AssumeRole"), URLQueryItem(name: "RoleSessionName", value: "a b+c")],
            date: Date(timeIntervalSince1970: 0))
        #expect(signed.body == Data("Action=AssumeRole&RoleSessionName=a%20b%2Bc".utf8))
        #expect(signed.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
        #expect(signed.headers["Authorization"]?.contains("SignedHeaders=content-type;host;x-amz-date,") == true)
    }

    @Test func refusesLifetimesOutsideOneSecondToSevenDays() throws {
        let url = URL(string: "https://h/k")!
        for seconds in [0, -1, 604_801] {
            #expect(throws: SigV4Error(code: .invalidExpiry, message: "a presigned URL lives 1 to 604800 seconds, not \(seconds)")) {
                try Self.signer().presign(method: "GET", url: url, expiresAfter: seconds, date: Date())
            }
        }
        #expect(throws: Never.self) { try Self.signer().presign(method: "GET", url: url, expiresAfter: 604_800, date: Date()) }
    }

    @Test func refusesAURLWithoutHost() {
        #expect { try Self.signer().sign(method: "GET", url: URLComponents(string: "/relative")!, payload: .empty, date: Date()) } throws: {
            ($0 as? SigV4Error)?.code == .invalidURL
        }
    }

    @Test func signsAlikeWithTheCachedSigningKey() throws {
        let signer = Self.signer()
        let url = URL(string: "https://h/k")!
        let dates = [Date(timeIntervalSince1970: 86_400), Date(timeIntervalSince1970: 86_401), Date(timeIntervalSince1970: 0)]
        let first = try dates.map { try signer.sign(method: "GET", url: url, payload: .empty, date: $0).signature }
        let fresh = try dates.map { try Self.signer().sign(method: "GET", url: url, payload: .empty, date: $0).signature }
        #expect(first == fresh)
    }
}

/// The timestamp's integer arithmetic against Foundation's Gregorian calendar, across leap years and centuries.
struct TimestampTests {
    @Test func theTimestampMatchesTheGregorianCalendarInUTC() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        var generator = SystemRandomNumberGenerator()
        let fixed: [TimeInterval] = [0, -1, 951_782_400, 951_868_799.9, 1_709_164_800, 4_107_542_399, 1_369_353_600, -86_400 * 365.25 * 30]
        let random = (0..<2000).map { _ in TimeInterval(Int64.random(in: -2_000_000_000...8_000_000_000, using: &generator)) }
        for seconds in fixed + random {
            let date = Date(timeIntervalSince1970: seconds)
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let expected = String(
                format: "%04d%02d%02dT%02d%02d%02dZ", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!)
            let timestamp = SigV4Timestamp(date)
            #expect(timestamp.dateTime == expected, "\(seconds)")
            #expect(timestamp.date == String(expected.prefix(8)))
            if (0...9999).contains(parts.year!) {
                #expect(timestamp.iso8601 == date.formatted(.iso8601), "\(seconds)")
            } else {
                #expect(timestamp.iso8601 == nil)
            }
        }
    }
}

/// The server's fast path: a bucket's target read once and an object key appended signs and sends the same URL as
/// the whole object URL read by `URLComponents`.
struct AppendedPathTests {
    static let keys = [
        "users/u/photos/a.jpg", "a b+c~.jpg", "é/ü/日本.png", "100%.txt", "a%2Fb", "...", ".hidden/..x", "q?x=1&y#z", "semi;colon,comma",
        "emoji 🙂", "trailing/", "a'b(c)!*$@=:",
    ]

    @Test(arguments: ["https://s3.us-east-1.amazonaws.com/bucket", "http://127.0.0.1:8333/my-bucket", "http://[::1]:9000/b", "https://h"])
    func anAppendedKeyPresignsAsTheWholeURLDoes(base: String) throws {
        let signer = CanonicalizationTests.signer(sessionToken: "token/with+chars=")
        let bucket = try SigV4RequestTarget(url: URLComponents(string: base)!)
        let date = Date(timeIntervalSince1970: 1_795_000_000)
        for key in Self.keys {
            var whole = URLComponents(string: base)!
            whole.path += "/" + key
            for headers in [[:], ["Content-Type": "image/jpeg"]] {
                let expected = try signer.presign(method: "PUT", url: whole, headers: headers, expiresAfter: 300, date: date)
                let fast = try signer.presignedURL(method: "PUT", target: bucket.appendingPath(key), headers: headers, expiresAfter: 300, date: date)
                #expect(fast == expected.absoluteString, "\(key)")
            }
        }
    }
}

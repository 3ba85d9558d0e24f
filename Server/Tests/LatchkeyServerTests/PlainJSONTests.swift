import Foundation
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Whatever the plain-JSON fast path reads, `JSONDecoder` reads alike; and it does read what clients send.
struct PlainJSONTests {
    static let bodies = [
        #"{"method":"PUT","key":"photos/a.jpg"}"#, #"{"key":"photos/a.jpg","method":"GET"}"#,
        #"{"method":"PUT","key":"a b+c~.jpg","content_type":"image/jpeg"}"#, " {\n\t\"method\" : \"DELETE\" ,\r\n \"key\":\"x\" } \n",
        #"{"method":"PUT","key":"photos/a.jpg","content_type":null}"#, #"{"method":"PUT","key":"a\/b"}"#, #"{"method":"PUT","key":"\u00e9"}"#,
        #"{"method":"PUT","key":"é"}"#, #"{"method":"put","key":"a"}"#, #"{"method":"PUT"}"#, #"{"key":"a"}"#, "{}", "[]", "",
        #"{"method":"PUT","key":"a","key":"b"}"#, #"{"method":"PUT","key":"a","extra":"1"}"#, #"{"method":"PUT","key":1}"#,
        #"{"method":"PUT","key":"a"} x"#, #"{"method":"PUT","key":"a",}"#, #"{"method":"PUT" "key":"a"}"#, #"{"method":"PUT","key":"a"#,
        "{\"method\":\"PUT\",\"key\":\"a\u{1}b\"}", "\u{FEFF}{\"method\":\"PUT\",\"key\":\"a\"}", #"{"method":"PUT","key":""}"#,
        #"{"method":"PUT","key":"a\"b"}"#, #"{"method":"PUT","key":"a\\\/b\\"}"#, #"{"method":"PUT","key":"a\nb"}"#,
        #"{"method":"PUT","key":"a\\"}"#, #"{"method":"PUT","key":"a\"}"#, #"{"method":"GET","key":"a","content_type":"text/plain; charset=utf-8"}"#,
    ]

    static func fast(_ body: [UInt8]) -> PresignRequest? { body.withUnsafeBytes { PresignRequest(plainJSON: $0) } }

    static func expectAlike(_ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        guard let fast = Self.fast(body) else { return }
        let decoded = try? JSONDecoder().decode(PresignRequest.self, from: Data(body))
        #expect(fast == decoded, "\(String(decoding: body, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    @Test(arguments: bodies)
    func whatTheFastPathReadsJSONDecoderReadsAlike(body: String) {
        Self.expectAlike(Array(body.utf8))
    }

    @Test func theFastPathReadsTheBodiesClientsSend() throws {
        let encoder = JSONEncoder()  // as the SDK: slashes written `\/`
        for request in [PresignRequest(method: .put, key: "photos/2026/a b.jpg", contentType: "image/jpeg"), PresignRequest(method: .get, key: "k")] {
            let body = Array(try encoder.encode(request))
            #expect(Self.fast(body) == request)
        }
        #expect(Self.fast(Array(#"{"method":"PUT","key":"a","key":"b"}"#.utf8)) == nil)  // JSONDecoder's to decide
    }

    /// Random edits of plain bodies: whatever the fast path still reads, JSONDecoder reads alike.
    @Test func mutatedBodiesAreReadAlikeOrLeftToJSONDecoder() {
        var generator = SplitMix64(seed: 0x1a7c_4e5)
        let alphabet = Array(#"{}[]":, \"\/\ab\#t\#n0é"#.utf8) + [0, 0x7f, 0xff]
        var read = 0
        for index in 0..<5000 {
            var body = Array(Self.bodies[index % 4].utf8)
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let position = Int.random(in: 0..<body.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: body.remove(at: position)
                case 1: body.insert(alphabet.randomElement(using: &generator)!, at: position)
                default: body[position] = alphabet.randomElement(using: &generator)!
                }
                if body.isEmpty { body = [0x7b] }
            }
            if Self.fast(body) != nil { read += 1 }
            Self.expectAlike(body)
        }
        #expect(read > 100)  // the edits leave many bodies plain: the comparison is not vacuous
    }
}

/// A seeded generator, so a failing edit can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { self.state = seed }
    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

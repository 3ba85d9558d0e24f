import LatchkeyTestSupport
import Testing

@testable import LatchkeySMTP

struct QuotedPrintableTests {
    @Test(arguments: [
        "plain ASCII",
        "Grüße, 🌍 and ✓",
        "a = sign and =3D",
        "trailing space \nand tab\t\nlines",
        String(repeating: "0123456789", count: 40),
        String(repeating: "ü", count: 100),
        String(repeating: "word ", count: 60),
        String(repeating: " ", count: 200),
        "",
    ])
    func encodedTextDecodesToTheOriginalWithCRLFLineBreaks(text: String) {
        let encoded = QuotedPrintable.encode(text)
        #expect(QuotedPrintableDecoder.decode(encoded) == text.replacingOccurrences(of: "\n", with: "\r\n"))
    }

    @Test(arguments: [String(repeating: "ü", count: 300), String(repeating: "a ", count: 300), String(repeating: "x", count: 1000)])
    func encodedLinesAreAtMost76CharactersAndNeverEndInWhitespace(text: String) {
        for line in QuotedPrintable.encode(text).components(separatedBy: "\r\n") {
            #expect(line.count <= 76)
            #expect(line.last != " " && line.last != "\t")
            #expect(line.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F })
        }
    }

    @Test func specialCharactersAreEscaped() {
        #expect(QuotedPrintable.encode("a=b") == "a=3Db")
        #expect(QuotedPrintable.encode("end ") == "end=20")
        #expect(QuotedPrintable.encode("ü") == "=C3=BC")
        #expect(QuotedPrintable.encode("From me") == "=46rom me")
    }

    @Test func anyLineBreakBecomesCRLF() {
        #expect(QuotedPrintable.encode("a\nb\r\nc\rd") == "a\r\nb\r\nc\r\nd")
    }
}

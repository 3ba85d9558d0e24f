import NIOCore
import Testing

@testable import LatchkeySMTP

/// What goes on the wire after DATA: CRLF line breaks, dot-stuffing, the terminating `CRLF . CRLF`.
struct SMTPMessageBodyTests {
    static func wire(_ message: String) -> String {
        String(buffer: SMTPMessageBody.encode(message))
    }

    @Test func aLineStartingWithADotGetsAnotherDot() {
        #expect(Self.wire("Hello\r\n.hidden\r\n") == "Hello\r\n..hidden\r\n.\r\n")
        #expect(Self.wire(".\r\n") == "..\r\n.\r\n")
        #expect(Self.wire("..two\r\n") == "...two\r\n.\r\n")
        #expect(Self.wire(".first line") == "..first line\r\n.\r\n")
    }

    @Test func dotsInsideALineAreLeftAlone() {
        #expect(Self.wire("a.b. c.\r\n") == "a.b. c.\r\n.\r\n")
    }

    @Test func bareLineFeedsAndCarriageReturnsBecomeCRLF() {
        #expect(Self.wire("a\nb\rc\r\nd") == "a\r\nb\r\nc\r\nd\r\n.\r\n")
        #expect(Self.wire("a\n.b\r.c") == "a\r\n..b\r\n..c\r\n.\r\n")
    }

    @Test func theTerminatorFollowsTheLastLineWithoutAnEmptyLine() {
        #expect(Self.wire("last\r\n") == "last\r\n.\r\n")
        #expect(Self.wire("last") == "last\r\n.\r\n")
        #expect(Self.wire("") == ".\r\n")
    }
}

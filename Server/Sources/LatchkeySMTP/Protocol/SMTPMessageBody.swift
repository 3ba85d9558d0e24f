import NIOCore

/// The bytes sent after `DATA` (RFC 5321 §4.5.2): line breaks normalised to CRLF, every line that starts with `.`
/// given another `.` (dot-stuffing), and the terminating `CRLF . CRLF`.
enum SMTPMessageBody {
    static func encode(_ message: String, allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: message.utf8.count + message.utf8.count / 32 + 8)
        var atLineStart = true
        var previousWasCR = false
        for byte in message.utf8 {
            switch byte {
            case UInt8(ascii: "\n") where previousWasCR:
                // The LF of a CRLF already written.
                previousWasCR = false
                continue
            case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                buffer.writeStaticString("\r\n")
                atLineStart = true
            default:
                if atLineStart && byte == UInt8(ascii: ".") { buffer.writeInteger(UInt8(ascii: ".")) }
                buffer.writeInteger(byte)
                atLineStart = false
            }
            previousWasCR = byte == UInt8(ascii: "\r")
        }
        if !atLineStart { buffer.writeStaticString("\r\n") }
        buffer.writeStaticString(".\r\n")
        return buffer
    }
}

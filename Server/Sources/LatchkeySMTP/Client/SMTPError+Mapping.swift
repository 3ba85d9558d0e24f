import NIOCore
import NIOPosix
import NIOSSL

extension SMTPError {
    /// Any error from the connection as an ``SMTPError`` at `stage`, without secrets.
    static func from(_ error: any Error, stage: Stage, redacting secrets: [String] = []) -> SMTPError {
        switch error {
        case let error as SMTPError:
            return error.at(stage)
        case NIOSSLError.uncleanShutdown:
            return SMTPError(.connectionClosed, stage: stage, detail: "the server closed the TLS connection", redacting: secrets)
        case is NIOSSLError, is NIOSSLExtraError, is BoringSSLError:
            return SMTPError(.tlsFailed, stage: stage, detail: "TLS: \(error)", redacting: secrets)
        case ChannelError.connectTimeout:
            return SMTPError(.timedOut, stage: stage, detail: "the connection attempt timed out", redacting: secrets)
        case is NIOConnectionError where stage == .connecting, is IOError where stage == .connecting:
            return SMTPError(.connectionFailed, stage: stage, detail: "could not connect: \(error)", redacting: secrets)
        default:
            return SMTPError(.connectionClosed, stage: stage, detail: "the connection failed: \(error)", redacting: secrets)
        }
    }

    /// The connection closed where a reply was due.
    static func closed(at stage: Stage) -> SMTPError {
        let detail =
            stage == .messageBody
            ? "the connection closed before the server confirmed the message; it may or may not have been accepted"
            : "the server closed the connection"
        return SMTPError(.connectionClosed, stage: stage, detail: detail)
    }
}

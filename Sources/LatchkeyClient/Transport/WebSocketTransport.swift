import Foundation

/// Opens WebSockets; the only way the live event stream (``LatchkeySession/liveEvents()``) reaches the network.
///
/// ``URLSessionWebSocketTransport`` is the real one. Tests pass a fake that scripts the server's frames; an app on a
/// platform whose `URLSession` has no WebSockets (Linux with a libcurl built without them) may pass one of its own.
public protocol WebSocketTransport: Sendable {
    /// Starts opening a WebSocket with `request` (`GET`, a `ws` or `wss` URL, its headers sent with the upgrade).
    ///
    /// It may return before the server accepted the upgrade: a refusal then comes from the first
    /// ``WebSocketConnection/receive()``. Either throws ``WebSocketTransportError`` when the server answered with an HTTP
    /// status instead of the upgrade (``WebSocketTransportError/Code/refused``) or the platform cannot open WebSockets
    /// (``WebSocketTransportError/Code/unsupported``), and any other error when no answer came.
    func connect(_ request: TransportRequest) async throws -> any WebSocketConnection
}

/// One open (or opening) WebSocket.
public protocol WebSocketConnection: Sendable {
    /// The next message from the server, or ``WebSocketMessage/closed(code:)`` once the connection closed. Throws when
    /// the connection failed without a close (or as ``WebSocketTransport/connect(_:)`` describes).
    func receive() async throws -> WebSocketMessage
    /// Sends a text message.
    func send(_ text: String) async throws
    /// Closes the connection (normal closure) without waiting; a pending ``receive()`` returns or throws.
    func close()
}

/// What ``WebSocketConnection/receive()`` returns.
public enum WebSocketMessage: Sendable, Equatable {
    /// A text message (a binary one, read as UTF-8).
    case text(String)
    /// The connection closed, with the code the server sent (`nil` when it sent none or the platform cannot tell it:
    /// FoundationNetworking on Linux reports codes it does not know, such as 4001, as 1003).
    case closed(code: UInt16?)
}

/// Why a WebSocket could not be opened although the network worked: a code a program can match and a sentence.
public struct WebSocketTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong; more codes may come.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        /// The server answered the upgrade with an HTTP status (``WebSocketTransportError/response`` holds it).
        public static let refused = Code(name: "refused")
        /// This platform cannot open WebSockets (FoundationNetworking on a libcurl without WebSocket support).
        public static let unsupported = Code(name: "unsupported")
        /// The code's name.
        public var description: String { self.name }
    }

    /// What went wrong.
    public var code: Code
    /// With ``Code/refused``: the server's answer.
    public var response: TransportResponse?
    /// A sentence for people.
    public var description: String

    /// The server answered the upgrade with `response` instead.
    public static func refused(_ response: TransportResponse) -> WebSocketTransportError {
        WebSocketTransportError(code: .refused, response: response, description: "The server refused the WebSocket (HTTP \(response.status)).")
    }

    /// This platform cannot open WebSockets, for `reason`.
    public static func unsupported(_ reason: String) -> WebSocketTransportError {
        WebSocketTransportError(code: .unsupported, response: nil, description: "WebSockets are not available here: \(reason)")
    }
}

import Foundation

/// Sends one HTTP request and returns the response; the only way the SDK reaches the network.
///
/// ``URLSessionTransport`` is the real one. Tests pass a stub that records requests and answers from a script.
/// A transport throws only when no response arrived (no connection, timeout, cancelled); every HTTP status,
/// 4xx and 5xx included, is a response.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the server's response.
    func send(_ request: TransportRequest) async throws -> TransportResponse
    /// Sends `request` and returns the response as soon as its head arrived, with the body as it arrives
    /// (``LatchkeySession/bytes(for:policy:)``). The default sends with ``send(_:)`` and hands the whole body over at once.
    func stream(_ request: TransportRequest) async throws -> TransportStream
}

extension HTTPTransport {
    /// The response of ``send(_:)``, its body in one piece.
    public func stream(_ request: TransportRequest) async throws -> TransportStream {
        TransportStream(buffered: try await self.send(request))
    }
}

/// An HTTP request as the SDK hands it to an ``HTTPTransport``.
///
/// Its description leaves out header values and the query string, which may carry tokens.
public struct TransportRequest: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The HTTP method, e.g. `GET`.
    public var method: String
    /// The absolute URL, query included.
    public var url: URL
    /// Header fields by name.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?

    /// Creates a request.
    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The value of the header `name`, matched case-insensitively.
    public func header(_ name: String) -> String? { self.headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value }

    /// `METHOD path` and the header names; never header values, query strings or bodies.
    public var description: String {
        "\(self.method) \(self.url.path) headers: [\(self.headers.keys.sorted().joined(separator: ", "))]"
    }
    /// Same as ``description``.
    public var debugDescription: String { self.description }
    /// A mirror that shows only ``description``, so `dump` prints no secret either.
    public var customMirror: Mirror { Mirror(self, children: ["request": self.description]) }
}

/// An HTTP response as an ``HTTPTransport`` returns it.
public struct TransportResponse: Sendable, Equatable {
    /// The status code.
    public var status: Int
    /// Header fields by name.
    public var headers: [String: String]
    /// The body (empty when there is none).
    public var body: Data

    /// Creates a response.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of the header `name`, matched case-insensitively.
    public func header(_ name: String) -> String? { self.headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value }
}

/// An HTTP response whose body is still arriving, as ``HTTPTransport/stream(_:)`` returns it.
public struct TransportStream: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields by name.
    public var headers: [String: String]
    /// The body in the pieces it arrives in; iterate it once. It throws when the connection fails midway; the request is
    /// cancelled when the stream and its iterators are released before the end, or when the iterating task is cancelled.
    public var body: AsyncThrowingStream<Data, any Error>
    /// Stops the transfer and ends ``body`` (``ResponseBytes`` calls it when its reader goes away before the end, such as
    /// a `break` out of its loop); calling it after the end does nothing.
    public var cancel: @Sendable () -> Void

    /// Creates a response; `cancel` stops its transfer (by default, nothing: a stream that stops it from its
    /// `onTermination` needs no more).
    public init(
        status: Int, headers: [String: String] = [:], body: AsyncThrowingStream<Data, any Error>, cancel: @escaping @Sendable () -> Void = {}
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.cancel = cancel
    }

    /// `response`, its body in one piece.
    public init(buffered response: TransportResponse) {
        let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        if !response.body.isEmpty { continuation.yield(response.body) }
        continuation.finish()
        self.init(status: response.status, headers: response.headers, body: body)
    }

    /// The value of the header `name`, matched case-insensitively.
    public func header(_ name: String) -> String? { self.headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value }
}

import Foundation

/// Sends one HTTP request and returns the response; the only way the SDK reaches the network.
///
/// ``URLSessionTransport`` is the real one. Tests pass a stub that records requests and answers from a script.
/// A transport throws only when no response arrived (no connection, timeout, cancelled); every HTTP status,
/// 4xx and 5xx included, is a response.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the server's response.
    func send(_ request: TransportRequest) async throws -> TransportResponse
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

import Foundation

/// A request to send with ``LatchkeySession/send(_:)``: a path on the server, its auth policy, and optionally a body.
public struct LatchkeyRequest: Sendable, Equatable {
    /// The HTTP method.
    public var method: String
    /// The path on the server, starting with `/` (e.g. `/api/v1/users/me`).
    public var path: String
    /// Query items (the token of ``AuthPolicy/tokenInQuery`` is added to these).
    public var queryItems: [URLQueryItem]
    /// Extra headers.
    public var headers: [String: String]
    /// The body.
    public var body: Data?
    /// How the request is authenticated.
    public var auth: AuthPolicy
    /// Whether the request carries a DPoP proof made with the device key (sign-ins, refreshes, account changes).
    var provesDevice = false

    /// Creates a request.
    public init(
        method: String, path: String, queryItems: [URLQueryItem] = [], headers: [String: String] = [:], body: Data? = nil, auth: AuthPolicy
    ) {
        self.method = method.uppercased()
        self.path = path.hasPrefix("/") ? path : "/" + path
        self.queryItems = queryItems
        self.headers = headers
        self.body = body
        self.auth = auth
    }

    /// A `GET` of `path`.
    public static func get(_ path: String, auth: AuthPolicy) -> LatchkeyRequest {
        LatchkeyRequest(method: "GET", path: path, auth: auth)
    }

    /// A `POST` of `body` encoded as JSON to `path`.
    public static func post(_ path: String, json body: some Encodable, auth: AuthPolicy) throws -> LatchkeyRequest {
        LatchkeyRequest(
            method: "POST", path: path, headers: ["Content-Type": "application/json"], body: try JSONEncoder().encode(body), auth: auth)
    }

    /// `id` (of a factor, a passkey…) as one segment of a path: it must not name another route. Throws
    /// ``LatchkeyError/invalidRequest(_:)`` ("… is not a `kind` ID") otherwise.
    static func pathSegment(_ id: String, naming kind: String) throws -> String {
        guard !id.isEmpty, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw LatchkeyError.invalidRequest("\(id) is not a \(kind) ID")
        }
        return id
    }
}

/// A successful (2xx) response of ``LatchkeySession/send(_:)``.
public struct LatchkeyResponse: Sendable, Equatable {
    /// The status code.
    public var status: Int
    /// Header fields.
    public var headers: [String: String]
    /// The body.
    public var body: Data
    /// The rate-limit headers, when the response carried them.
    public var rateLimit: RateLimitInfo?

    /// Decodes the body as JSON (ISO 8601 dates, as the server writes them).
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do { return try decoder.decode(type, from: self.body) } catch { throw LatchkeyError.invalidResponse }
    }
}

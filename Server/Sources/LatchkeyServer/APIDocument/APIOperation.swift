import HTTPTypes
import LatchkeyAPI

/// One operation of the HTTP API as the document describes it: declared where its route is added (``APIRoutes``), so
/// the served routes and the document are one list. Request and response bodies are named by their Codable types;
/// ``SchemaRecorder`` reads their schemas from the types themselves.
package struct APIOperation: @unchecked Sendable {
    /// How a caller authenticates.
    package enum Security: String, Sendable {
        case none
        /// `Authorization: Bearer <access token>`.
        case bearer
        /// A bearer is optional (Sign in with Apple links when one is sent).
        case optionalBearer
        /// The usage service key as the bearer.
        case serviceKey
        /// A backend API key (`backend.service-key`, `backend.service-keys`) as the bearer.
        case backendKey
    }

    /// A parameter outside the body.
    package struct Parameter: @unchecked Sendable {
        package enum Location: String, Sendable {
            case header
            case query
            case path
        }
        let name: String
        let location: Location
        let required: Bool
        let description: String
        var schema: JSONSchema = .string()

        package init(_ name: String, in location: Location, required: Bool, _ description: String, schema: JSONSchema = .string()) {
            self.name = name
            self.location = location
            self.required = required
            self.description = description
            self.schema = schema
        }
    }

    /// One status the operation answers with.
    package struct Outcome: @unchecked Sendable {
        let status: Int
        var description: String
        /// The body's type; nil for a status answered with the error envelope (any status ≥ 400) or no body.
        let body: (any Decodable.Type)?
        /// Component header names the answer carries, besides `X-Request-ID`.
        var headers: [String] = []
        /// The answer is an HTML page for a person (a mail link's page), never the error envelope.
        var isHTMLPage = false

        package init(_ status: Int, _ description: String, body: (any Decodable.Type)? = nil, headers: [String] = []) {
            self.status = status
            self.description = description
            self.body = body
            self.headers = headers
        }
    }

    let method: HTTPRequest.Method
    /// The path as the document writes it, `{name}` for a path parameter.
    let path: String
    let id: String
    let tag: String
    let summary: String
    var description: String
    var security: Security = .none
    var parameters: [Parameter] = []
    var requestBody: (any Decodable.Type)?
    /// An empty body is accepted (and means the defaults).
    var requestBodyOptional = false
    var requestExample: String?
    var outcomes: [Outcome]
    /// Headers every answer carries (a rate limit's, the DPoP nonce).
    var commonHeaders: [String] = []

    package init(
        _ method: HTTPRequest.Method, _ path: String, id: String, tag: String, summary: String, description: String, security: Security = .none,
        parameters: [Parameter] = [], requestBody: (any Decodable.Type)? = nil, requestBodyOptional: Bool = false, requestExample: String? = nil,
        outcomes: [Outcome]
    ) {
        self.method = method
        self.path = path
        self.id = id
        self.tag = tag
        self.summary = summary
        self.description = description
        self.security = security
        self.parameters = parameters
        self.requestBody = requestBody
        self.requestBodyOptional = requestBodyOptional
        self.requestExample = requestExample
        self.outcomes = outcomes
    }

    /// The path in Hummingbird's form (`:name` for a parameter, no leading `/`).
    var routerPath: String {
        self.path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}") ? ":" + segment.dropFirst().dropLast() : String(segment)
        }.joined(separator: "/")
    }

    /// The statuses the document lists.
    var statuses: Set<Int> { Set(self.outcomes.map(\.status)) }

    /// Adds `outcome` unless the status is listed already (then its headers join the listed one's).
    mutating func add(_ outcome: Outcome) {
        if let index = self.outcomes.firstIndex(where: { $0.status == outcome.status }) {
            self.outcomes[index].headers += outcome.headers.filter { !self.outcomes[index].headers.contains($0) }
        } else {
            self.outcomes.append(outcome)
        }
    }

    /// A route that issues session tokens (a sign-in, a refresh): 403 `user_disabled` for a disabled user, and 503 when
    /// the claims hook failed under `hooks.claims.on-failure` `refuse`.
    mutating func documentIssuingSessionTokens() {
        for (status, text) in [
            (403, "`user_disabled`: the user is disabled until the app's backend enables them."),
            (503, "`service_unavailable`: the claims hook failed under `hooks.claims.on-failure` `refuse`; nothing changed."),
        ] {
            if let index = self.outcomes.firstIndex(where: { $0.status == status }) {
                self.outcomes[index].description += " Or " + text
            } else {
                self.outcomes.append(Outcome(status, text.prefix(1).uppercased() + text.dropFirst()))
            }
        }
    }

    /// Adds `header` to every answer.
    mutating func addHeaderToEveryOutcome(_ header: String) {
        if !self.commonHeaders.contains(header) { self.commonHeaders.append(header) }
    }
}

extension APIOperation.Outcome {
    static func badRequest(_ description: String = "The request is not valid (body, field or header).") -> Self { Self(400, description) }
    static func unauthorized(_ description: String = "No valid access token.") -> Self { Self(401, description, headers: ["WWW-Authenticate"]) }
    static func forbidden(_ description: String) -> Self { Self(403, description) }
    static func notFound(_ description: String) -> Self { Self(404, description) }
    static func conflict(_ description: String) -> Self { Self(409, description) }
    /// An HTML page (`text/html`), whatever the status.
    static func page(_ status: Int, _ description: String) -> Self {
        var outcome = Self(status, description)
        outcome.isHTMLPage = true
        return outcome
    }
    static let tooLarge = Self(413, "The request body is larger than `http.max-body-size`.")
    static let unavailable = Self(503, "The database is not answering; try again shortly.")
    static func badGateway(_ description: String) -> Self { Self(502, description) }
    static let providerKeysUnreachable = Self(502, "The bearer is a configured identity provider's token and its keys could not be fetched.")
}

import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The endpoints that read a JSON body.
enum JSONEndpoint: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case registerUser
    case registerDevice
    case refresh
    case logout
    case exchangeAccessCode
    case presign

    var path: String {
        switch self {
        case .registerUser: "/api/v1/users/register"
        case .registerDevice: "/api/v1/auth/register-device"
        case .refresh: "/api/v1/auth/refresh"
        case .logout: "/api/v1/auth/logout"
        case .exchangeAccessCode: "/api/v1/auth/access-code/exchange"
        case .presign: "/api/v1/storage/presign"
        }
    }

    /// The string field the endpoint reads.
    var field: String {
        switch self {
        case .registerUser: "user_id"
        case .registerDevice: "device_id"
        case .refresh: "refresh_token"
        case .logout: "scope"
        case .exchangeAccessCode: "access_code"
        case .presign: "key"
        }
    }

    /// Logout is behind the bearer: bad input must be judged with a valid one, or the 401 hides it.
    var needsBearer: Bool { self == .logout || self == .presign }

    var testDescription: String { "POST \(self.path)" }
}

/// A request body an endpoint must refuse, and how.
struct BadBody: Sendable, CustomTestStringConvertible {
    let endpoint: JSONEndpoint
    let label: String
    let json: String
    let status: HTTPResponse.Status
    let code: ErrorCode

    var testDescription: String { "\(self.endpoint.path): \(self.label)" }

    /// A marker no error message may quote.
    static let marker = "zq-submitted-value-7731"

    static func malformed(_ endpoint: JSONEndpoint, _ label: String, _ json: String) -> BadBody {
        BadBody(endpoint: endpoint, label: label, json: json, status: .badRequest, code: .invalidRequest)
    }

    /// Bodies that are not the endpoint's JSON object: syntax errors, other JSON types, wrong field types, missing fields.
    static let shapes: [BadBody] = JSONEndpoint.allCases.flatMap { endpoint -> [BadBody] in
        let field = endpoint.field
        var cases = [
            malformed(endpoint, "malformed JSON", "{"),
            malformed(endpoint, "truncated JSON", #"{"\#(field)": "abc"#),
            malformed(endpoint, "JSON array instead of object", "[]"),
            malformed(endpoint, "array holding the object", #"[{"\#(field)": "3f2504e0-4f89-11d3-9a0c-0305e82c3301"}]"#),
            malformed(endpoint, "JSON string instead of object", #""\#(marker)""#),
            malformed(endpoint, "JSON null instead of object", "null"),
            malformed(endpoint, "number where a string belongs", #"{"\#(field)": 987654321}"#),
            malformed(endpoint, "boolean where a string belongs", #"{"\#(field)": true}"#),
            malformed(endpoint, "object where a string belongs", #"{"\#(field)": {"$ne": "\#(marker)"}}"#),
            malformed(endpoint, "array where a string belongs", #"{"\#(field)": ["\#(marker)"]}"#),
        ]
        switch endpoint {
        case .logout:
            // `scope` is optional (an empty body means local), but a value must be one of the scopes.
            cases.append(malformed(endpoint, "unknown scope", #"{"scope": "\#(marker)"}"#))
        case .registerUser, .registerDevice, .refresh, .exchangeAccessCode, .presign:
            cases += [
                malformed(endpoint, "missing fields", "{}"),
                malformed(endpoint, "only an unknown field", #"{"unexpected": "\#(marker)"}"#),
                malformed(endpoint, "null where a string belongs", #"{"\#(field)": null}"#),
                malformed(endpoint, "empty body", ""),
            ]
        }
        if endpoint == .presign {
            cases.append(malformed(endpoint, "unknown method", #"{"method": "POST", "key": "photos/a.jpg"}"#))
            cases.append(malformed(endpoint, "number as content_type", #"{"method": "PUT", "key": "a", "content_type": 7}"#))
        }
        if endpoint == .registerDevice {
            cases.append(
                malformed(endpoint, "number as device_secret", #"{"device_id": "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "device_secret": 42}"#))
        }
        return cases
    }

    /// Values that are not UUIDs, for the fields that must be one.
    static let notUUIDs = [
        "not-a-uuid", "", "3f2504e0-4f89-11d3-9a0c-0305e82c3301a", "3f2504e0-4f89-11d3-9a0c-0305e82c330",
        "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", marker,
    ]

    static let nonUUIDIDs: [BadBody] = [JSONEndpoint.registerUser, .registerDevice].flatMap { endpoint in
        notUUIDs.map { value in
            BadBody(
                endpoint: endpoint, label: "\(endpoint.field) \"\(value)\" (\(value.count) characters)",
                json: #"{"\#(endpoint.field)": "\#(value)"}"#, status: .badRequest, code: .invalidUUID)
        }
    }

    /// 70,000 bytes: a JSON string value well over the 64 KiB default limit.
    static let oversized: [BadBody] = JSONEndpoint.allCases.map { endpoint in
        BadBody(
            endpoint: endpoint, label: "70,000-byte body",
            json: #"{"\#(endpoint.field)": "\#(String(repeating: "x", count: 70_000))"}"#, status: .contentTooLarge,
            code: .payloadTooLarge)
    }

    static let all = shapes + nonUUIDIDs + oversized

    /// The cases that must also hold over a real socket.
    static let overTheWire = JSONEndpoint.allCases.map { malformed($0, "malformed JSON", "{") } + oversized
}

/// What a server has stored, as far as bad input could reach it.
struct StoredState: Equatable {
    let users: [UserRecord]
    let devices: [DeviceRecord]
    let accessCodes: [AccessCodeRecord]

    static func of(_ server: TestServer) async throws -> StoredState {
        let users = try await server.services.users.users(limit: 1000, offset: 0)
        var devices: [DeviceRecord] = []
        for user in users { devices += try await server.services.users.devices(ofUser: user.id) }
        return StoredState(users: users, devices: devices, accessCodes: try await server.services.accessCodes.list())
    }
}

/// Item 8 of the core issue: bad input gets its 4xx and the envelope, never a 5xx, changes nothing,
/// never has its submitted values quoted back, and leaves the server serving.
@Suite struct BadInputTests {
    /// A server with one registered device and an access code for it, so there is something bad input could damage.
    struct Fixture: Sendable {
        let session: TokenPairResponse
        let code: String
    }

    func withFixture(
        _ transport: Transport, _ body: @Sendable @escaping (any TestClientProtocol, TestServer, Fixture) async throws -> Void
    ) async throws {
        try await withServer(transport) { client, server in
            let session = try await client.registerDevice()
            let code = try await server.services.accessCodes.issue(userID: session.userID, expiresIn: nil, note: "fixture").code
            try await body(client, server, Fixture(session: session, code: code))
        }
    }

    func send(_ bad: BadBody, with client: some TestClientProtocol, fixture: Fixture) async throws -> TestResponse {
        try await client.send(.post, bad.endpoint.path, bearer: bad.endpoint.needsBearer ? fixture.session.accessToken : nil, json: bad.json)
    }

    func expectRefusal(_ response: TestResponse, as bad: BadBody, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == bad.status, sourceLocation: sourceLocation)
        #expect((400..<500).contains(response.status.code), "never a 5xx", sourceLocation: sourceLocation)
        let envelope = response.envelope
        #expect(envelope != nil, "the error envelope, got: \(response.text.prefix(200))", sourceLocation: sourceLocation)
        #expect(envelope?.error.code == bad.code, sourceLocation: sourceLocation)
        #expect(envelope?.error.message.isEmpty == false, sourceLocation: sourceLocation)
    }

    @Test(arguments: BadBody.all)
    func badBodyGetsItsStatusAndTheErrorEnvelope(bad: BadBody) async throws {
        try await self.withFixture(.router) { client, _, fixture in
            let response = try await self.send(bad, with: client, fixture: fixture)
            self.expectRefusal(response, as: bad)
        }
    }

    @Test(arguments: BadBody.all)
    func badBodyChangesNothingStored(bad: BadBody) async throws {
        try await self.withFixture(.router) { client, server, fixture in
            let before = try await StoredState.of(server)
            _ = try await self.send(bad, with: client, fixture: fixture)
            #expect(try await StoredState.of(server) == before)
        }
    }

    @Test(arguments: BadBody.all)
    func badBodyLeavesTheExistingSessionWorking(bad: BadBody) async throws {
        try await self.withFixture(.router) { client, _, fixture in
            _ = try await self.send(bad, with: client, fixture: fixture)
            #expect(try await client.validate(fixture.session.accessToken).status == .ok)
            let refreshed = try await client.refresh(fixture.session.refreshToken)
            #expect(refreshed.status == .ok)
            #expect(try refreshed.decode(TokenPairResponse.self).sessionID == fixture.session.sessionID)
        }
    }

    @Test(arguments: BadBody.overTheWire)
    func malformedAndOversizedBodiesAreRefusedOverALiveSocket(bad: BadBody) async throws {
        try await self.withFixture(.live) { client, server, fixture in
            let before = try await StoredState.of(server)
            let response = try await self.send(bad, with: client, fixture: fixture)
            self.expectRefusal(response, as: bad)
            #expect(try await StoredState.of(server) == before)
        }
    }

    @Test(arguments: BadBody.all)
    func errorMessagesNeverQuoteTheSubmittedValue(bad: BadBody) async throws {
        try await self.withFixture(.router) { client, _, fixture in
            let response = try await self.send(bad, with: client, fixture: fixture)
            #expect(!response.text.contains(BadBody.marker))
            #expect(!response.text.contains("987654321"))
            #expect(!response.text.contains("not-a-uuid"))
            #expect(!response.text.contains("xxxxxxxxxx"))
        }
    }

    @Test(arguments: Transport.allCases)
    func anUnknownRefreshTokenIsNotQuotedInTheAnswer(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let presented = "rt-\(BadBody.marker)-\(UUID().uuidString)"
            let response = try await client.refresh(presented)
            #expect(response.status == .unauthorized)
            #expect(response.envelope?.error.code == .invalidGrant)
            #expect(!response.text.contains(presented))
            #expect(!response.text.contains(BadBody.marker))
            #expect(response.headers[.wwwAuthenticate]?.contains(BadBody.marker) != true)
        }
    }

    @Test(arguments: Transport.allCases)
    func aBogusAccessCodeIsNotQuotedInTheAnswer(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let presented = "code-\(BadBody.marker)"
            let response = try await client.send(.post, "/api/v1/auth/access-code/exchange", body: AccessCodeExchangeRequest(accessCode: presented))
            #expect(response.status == .unauthorized)
            #expect(response.envelope?.error.code == .invalidToken)
            #expect(!response.text.contains(BadBody.marker))
            #expect(response.headers[.wwwAuthenticate]?.contains(BadBody.marker) != true)
        }
    }

    @Test(arguments: Transport.allCases)
    func aWrongDeviceSecretIsNotQuotedInTheAnswer(transport: Transport) async throws {
        try await withServer(transport) { client, _ in
            let first = try await client.registerDevice()
            let response = try await client.send(
                .post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: first.userID, deviceSecret: BadBody.marker))
            #expect(response.status == .unauthorized)
            #expect(response.envelope?.error.code == .invalidDeviceSecret)
            #expect(!response.text.contains(BadBody.marker))
        }
    }

    @Test(arguments: [JSONEndpoint.registerUser, .registerDevice])
    func aBodyOfExactlyTheLimitIsNotTooLarge(endpoint: JSONEndpoint) async throws {
        try await withServer(.router) { client, server in
            let limit = server.services.configuration.maxBodySize
            let prefix = #"{"\#(endpoint.field)": ""#
            let suffix = #""}"#
            let json = prefix + String(repeating: "x", count: limit - prefix.utf8.count - suffix.utf8.count) + suffix
            #expect(json.utf8.count == limit)
            let response = try await client.send(.post, endpoint.path, json: json)
            // Read in full, so refused for what it says (not a UUID), not for its size.
            #expect(response.status == .badRequest)
            #expect(response.envelope?.error.code == .invalidUUID)
        }
    }

    @Test(arguments: [JSONEndpoint.registerUser, .registerDevice])
    func aBodyOneByteOverTheLimitIsTooLarge(endpoint: JSONEndpoint) async throws {
        try await withServer(.router) { client, server in
            let limit = server.services.configuration.maxBodySize
            let prefix = #"{"\#(endpoint.field)": ""#
            let suffix = #""}"#
            let json = prefix + String(repeating: "x", count: limit + 1 - prefix.utf8.count - suffix.utf8.count) + suffix
            #expect(json.utf8.count == limit + 1)
            let response = try await client.send(.post, endpoint.path, json: json)
            #expect(response.status == .contentTooLarge)
            #expect(response.envelope?.error.code == .payloadTooLarge)
        }
    }

    @Test func theServerKeepsServingAfterBadInput() async throws {
        try await self.withFixture(.live) { client, _, fixture in
            for bad in BadBody.all {
                let response = try await self.send(bad, with: client, fixture: fixture)
                #expect((400..<500).contains(response.status.code), "\(bad.testDescription) answered \(response.status)")
            }
            #expect(try await client.send(.get, "/api/v1/health").status == .ok)
            #expect(
                try await client.send(.post, "/api/v1/auth/register-device", body: RegisterDeviceRequest(deviceID: UUID().uuidString)).status
                    == .created)
        }
    }
}

import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyCBOR
import LatchkeyPasskeyPeer
import LatchkeyServer
import SQLKit
import Testing

/// Malformed WebAuthn input over HTTP (issue 33): a table of well over 200 attestation objects, authenticator data,
/// client data, signatures and credential envelopes, each broken in its own way from an honest one made for a live
/// challenge (so the parser is reached). None is answered with a 5xx, every answer is the documented error envelope,
/// and no row of passkeys or sessions changes.
@Suite(.timeLimit(.minutes(5)))
struct PasskeyFuzzTests {
    /// One malformed credential: what it is, and how it is made from an honest one (the credential's JSON object).
    struct Mutation: Sendable {
        let name: String
        let make: @Sendable ([String: Any]) throws -> Any
    }

    @Test func noMalformedRegistrationOrAssertionIsA5xxOrChangesARow() async throws {
        let registrations = Self.registrationMutations()
        let assertions = Self.assertionMutations()
        #expect(registrations.count + assertions.count >= 200, "\(registrations.count) + \(assertions.count)")
        let server = try await TestServer.withPasskeys()
        try await server.test(.live) { client in
            var authenticator = SoftwareAuthenticator()
            let (owner, passkey) = try await client.deviceUserWithPasskey(&authenticator)
            let device = try await client.registerDevice()
            let before = try await Self.rows(server)

            for mutation in registrations {
                let ceremony = try await client.beginPasskeyRegistration(bearer: device.accessToken)
                var fresh = SoftwareAuthenticator()
                let honest = try Self.object(fresh.register(ceremony).registrationResponseJSON())
                let answer = try await client.send(
                    .post, "/api/v1/passkeys/register", bearer: device.accessToken,
                    json: try Self.body(["challenge_id": ceremony.challengeID, "credential": try mutation.make(honest)]))
                Self.expectRefused(answer, mutation.name)
            }
            for mutation in assertions {
                let ceremony = try await client.beginPasskeySignIn()
                var copy = authenticator  // each assertion counts from the stored counter
                let honest = try Self.object(copy.assert(ceremony).authenticationResponseJSON())
                let answer = try await client.send(
                    .post, "/api/v1/passkeys/authenticate",
                    json: try Self.body(["challenge_id": ceremony.challengeID, "credential": try mutation.make(honest)]))
                Self.expectRefused(answer, mutation.name)
            }

            #expect(try await Self.rows(server) == before)
            #expect(try await client.passkeyList(bearer: device.accessToken).isEmpty)
            #expect(try await client.passkeyList(bearer: owner.accessToken) == [passkey])
            // The honest authenticator still signs in: nothing above spent or moved its counter.
            #expect(try await client.signInWithPasskey(&authenticator).status == .ok)
        }
    }

    /// Bodies that are not the route's JSON: 400 with the envelope, on every passkey route that reads a body.
    @Test(arguments: [
        "/api/v1/passkeys/register", "/api/v1/passkeys/authenticate", "/api/v1/passkeys/register/options", "/api/v1/passkeys/authenticate/options",
    ])
    func aBodyThatIsNotTheRoutesJSONIs400(path: String) async throws {
        let server = try await TestServer.withPasskeys()
        try await server.test(.router) { client in
            let device = try await client.registerDevice()
            let bodies = [
                "not json", "[]", "null", "\"text\"", #"{"challenge_id": 1, "credential": {}}"#, #"{"challenge_id": "x", "credential": []}"#,
                #"{"challenge_id": "x"}"#, #"{"challenge_id": "x", "credential": {"id": "AA", "rawId": "AA", "type": "public-key"}}"#,
                #"{"challenge_id": "x", "credential": {"response": {}}, "device_id": 5}"#, String(repeating: "[", count: 5000),
            ]
            for body in bodies {
                let answer = try await client.send(.post, path, bearer: device.accessToken, json: body)
                let tolerated: Set<Int> = path.hasSuffix("options") ? [200, 400] : [400]  // options may ignore their body
                #expect(tolerated.contains(Int(answer.status.code)), "\(body.prefix(40)): \(answer.status) \(answer.text)")
                if answer.status == .badRequest { #expect(answer.envelope != nil, "\(body.prefix(40)): \(answer.text)") }
            }
            let rename = try await client.send(.patch, "/api/v1/passkeys/\(UUID().uuidString)", bearer: device.accessToken, json: #"{"name": 7}"#)
            #expect(rename.status == .badRequest && rename.envelope != nil, "\(rename.text)")
            #expect(try await server.sessionCount(of: device.userID) == 1)
        }
    }

    static func expectRefused(_ answer: TestResponse, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect((400..<500).contains(answer.status.code), "\(name): \(answer.status) \(answer.text)", sourceLocation: sourceLocation)
        #expect(answer.envelope != nil, "\(name): no error envelope: \(answer.text)", sourceLocation: sourceLocation)
    }

    /// Every passkey row, and the number of sessions and devices.
    static func rows(_ server: TestServer) async throws -> [String] {
        try await server.services.database.read { sql in
            let passkeys = try await sql.raw("SELECT * FROM passkeys ORDER BY id").all().map { row in
                row.allColumns.map { column in "\(column)=\(Self.text(row, column))" }.joined(separator: " ")
            }
            let sessions = try await sql.raw("SELECT COUNT(*) AS n FROM sessions").first()?.decode(column: "n", as: Int.self) ?? -1
            let devices = try await sql.raw("SELECT COUNT(*) AS n FROM devices").first()?.decode(column: "n", as: Int.self) ?? -1
            return passkeys + ["sessions \(sessions)", "devices \(devices)"]
        }
    }

    /// A column's value as text, whatever its type.
    static func text(_ row: any SQLRow, _ column: String) -> String {
        if let number = try? row.decode(column: column, as: Int.self) { return String(number) }
        if let text = try? row.decode(column: column, as: String.self) { return text }
        if let data = try? row.decode(column: column, as: Data.self) { return data.base64EncodedString() }
        return "null"
    }

    // MARK: Registrations

    static func registrationMutations() -> [Mutation] {
        var mutations: [Mutation] = []
        func attestationObject(_ name: String, _ change: @escaping @Sendable ([UInt8]) throws -> [UInt8]) {
            mutations.append(
                Mutation(name: "attestationObject: \(name)") { credential in
                    try Self.replacing(credential, "attestationObject") { try change($0) }
                })
        }
        func authenticatorData(_ name: String, _ change: @escaping @Sendable ([UInt8]) throws -> [UInt8]) {
            attestationObject("authData \(name)") { object in
                let authData = try #require(try CBORDecoder().decode(object)["authData"]?.bytesValue)
                return CBOREncoder.encode(
                    PasskeyRegistration.attestationObject(format: "none", statement: .map([]), authenticatorData: try change(authData)))
            }
        }
        // Every other prefix of the attestation object, and of its authData.
        for length in stride(from: 0, to: 260, by: 2) {
            attestationObject("cut to \(length) bytes") { object in
                guard length < object.count else { return Array(object.dropLast()) }
                return Array(object.prefix(length))
            }
        }
        for length in stride(from: 0, to: 170, by: 3) {
            authenticatorData("cut to \(length) bytes") { data in Array(data.prefix(min(length, data.count - 1))) }
        }
        for (name, bytes) in Self.brokenCBOR { attestationObject(name) { _ in bytes } }
        attestationObject("a trailing byte") { $0 + [0x00] }
        attestationObject("a trailing break") { $0 + [0xFF] }
        attestationObject("twice") { $0 + $0 }
        attestationObject("tagged") { [0xD8, 0x18] + $0 }
        attestationObject("its map made indefinite") { object in [0xBF] + object.dropFirst() + [0xFF] }
        authenticatorData("a trailing byte") { $0 + [0x00] }
        authenticatorData("without the AT flag") { data in Array(data.prefix(32)) + [data[32] & ~0x40] + Array(data.dropFirst(33)) }
        authenticatorData("with an ED flag and no extensions") { data in Array(data.prefix(32)) + [data[32] | 0x80] + Array(data.dropFirst(33)) }
        authenticatorData("with BS and no BE") { data in Array(data.prefix(32)) + [(data[32] & ~0x08) | 0x10] + Array(data.dropFirst(33)) }
        for (name, length) in [
            ("a credential ID length past the end", 0xFFFF), ("a credential ID of 1024 bytes", 1024), ("an empty credential ID", 0),
        ] {
            authenticatorData(name) { data in Array(data.prefix(53)) + [UInt8(length >> 8), UInt8(length & 0xFF)] + Array(data.dropFirst(55)) }
        }
        authenticatorData("extensions that are garbage") { data in
            Array(data.prefix(32)) + [data[32] | 0x80] + Array(data.dropFirst(33)) + [0x1C, 0x00]
        }
        for (name, key) in Self.brokenKeys {
            authenticatorData("a credential key \(name)") { data in
                var parts = try RegistrationAuthenticatorData(data)
                parts.rest = []
                let idLength = [UInt8(parts.credentialID.count >> 8), UInt8(parts.credentialID.count & 0xFF)]
                return parts.rpIDHash + [parts.flags] + parts.signCount + parts.aaguid + idLength + parts.credentialID + key
            }
        }
        for (name, clientData) in Self.brokenClientData {
            mutations.append(
                Mutation(name: "clientDataJSON: \(name)") { credential in
                    try Self.replacing(credential, "clientDataJSON") { _ in clientData }
                })
        }
        mutations += Self.brokenEnvelopes(field: "attestationObject")
        return mutations
    }

    // MARK: Assertions

    static func assertionMutations() -> [Mutation] {
        var mutations: [Mutation] = []
        func field(_ field: String, _ name: String, _ change: @escaping @Sendable ([UInt8]) throws -> [UInt8]) {
            mutations.append(Mutation(name: "\(field): \(name)") { credential in try Self.replacing(credential, field) { try change($0) } })
        }
        for length in 0..<37 { field("authenticatorData", "cut to \(length) bytes") { Array($0.prefix(length)) } }
        field("authenticatorData", "a trailing byte") { $0 + [0x00] }
        field("authenticatorData", "an AT flag and nothing attested") { data in Array(data.prefix(32)) + [data[32] | 0x40] + Array(data.dropFirst(33))
        }
        field("authenticatorData", "an ED flag and garbage") { data in Array(data.prefix(32)) + [data[32] | 0x80] + Array(data.dropFirst(33)) + [0xFF]
        }
        field("authenticatorData", "an ED flag and an indefinite map") { data in
            Array(data.prefix(32)) + [data[32] | 0x80] + Array(data.dropFirst(33)) + [0xBF, 0xFF]
        }
        field("authenticatorData", "8 KiB") { _ in randomBytes(8192) }
        for (name, signature) in [
            ("empty", []), ("one byte", [0x30]), ("random 64 bytes", randomBytes(64)), ("random 72 bytes", randomBytes(72)),
            ("a DER sequence longer than its bytes", [0x30, 0x46, 0x02, 0x21, 0x00]),
            ("a DER sequence of zeros", [0x30, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00]),
            ("4 KiB", randomBytes(4096)),
        ] as [(String, [UInt8])] {
            field("signature", name) { _ in signature }
        }
        field("signature", "cut in half") { Array($0.prefix($0.count / 2)) }
        for (name, clientData) in Self.brokenClientData { field("clientDataJSON", name) { _ in clientData } }
        mutations += Self.brokenEnvelopes(field: "authenticatorData")
        mutations.append(Mutation(name: "userHandle not base64url") { Self.setting($0, in: "response", "userHandle", "!!not base64!!") })
        mutations.append(Mutation(name: "userHandle a number") { Self.setting($0, in: "response", "userHandle", 42) })
        mutations.append(Mutation(name: "signature a number") { Self.setting($0, in: "response", "signature", 7) })
        return mutations
    }

    // MARK: The broken pieces

    /// Attestation objects a strict CBOR decoder refuses, or that are not the `{fmt, attStmt, authData}` map.
    static let brokenCBOR: [(String, [UInt8])] = [
        ("empty", []), ("a break alone", [0xFF]), ("reserved additional information", [0xBC]), ("an array", [0x83, 0x01, 0x02, 0x03]),
        ("an integer", [0x18, 0x2A]), ("a text", CBOREncoder.encode(.text("none"))), ("null", [0xF6]), ("an empty map", [0xA0]),
        ("a map of 3 with one entry", [0xA3, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8)),
        ("a byte string of 2^32 bytes", [0x5A, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]),
        ("a byte string of 2^63 bytes", [0x5B, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
        ("a map of 2^32 entries", [0xBA, 0xFF, 0xFF, 0xFF, 0xFF]),
        ("invalid UTF-8 text", [0xA1, 0x63, 0xFF, 0xFE, 0xFD, 0x01]),
        (
            "a duplicate key",
            [0xA2, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8) + [0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8)
        ),
        ("a float key", [0xA1, 0xF9, 0x3C, 0x00, 0x01]), ("an undefined key", [0xA1, 0xF7, 0x01]), ("a simple value 32", [0xF8, 0x20]),
        ("arrays nested 40 deep", [UInt8](repeating: 0x81, count: 40) + [0x01]), ("maps nested 40 deep", Self.nestedMaps(40)),
        ("an indefinite byte string", IndefiniteCBOR.bytes(randomBytes(40))), ("an indefinite array", IndefiniteCBOR.array([.unsigned(1)])),
        ("an unterminated indefinite map", [0xBF, 0x61, 0x61, 0x01]),
        ("fmt a number", CBOREncoder.encode(.map([CBOR.Entry(key: .text("fmt"), value: .unsigned(1))]))),
        ("authData a text", CBOREncoder.encode(Self.object(fmt: .text("none"), statement: .map([]), authData: .text("authData")))),
        ("attStmt an array", CBOREncoder.encode(Self.object(fmt: .text("none"), statement: .array([]), authData: .bytes(randomBytes(37))))),
        (
            "authData missing",
            CBOREncoder.encode(.map([CBOR.Entry(key: .text("fmt"), value: .text("none")), CBOR.Entry(key: .text("attStmt"), value: .map([]))]))
        ),
        (
            "fmt missing",
            CBOREncoder.encode(
                .map([CBOR.Entry(key: .text("attStmt"), value: .map([])), CBOR.Entry(key: .text("authData"), value: .bytes(randomBytes(37)))]))
        ),
        ("authData of random bytes", CBOREncoder.encode(Self.object(fmt: .text("none"), statement: .map([]), authData: .bytes(randomBytes(120))))),
        (
            "a tag on authData",
            [0xA3, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8) + [0x67] + Array("attStmt".utf8) + [0xA0, 0x68] + Array("authData".utf8)
                + [0xC2, 0x41, 0x00]
        ),
        ("8 KiB of random bytes", randomBytes(8192)),
    ]

    /// Credential public keys that are not one well-formed COSE_Key.
    static let brokenKeys: [(String, [UInt8])] = [
        ("missing", []),
        ("cut short", Array(CBOREncoder.encode(.labelled([(1, CBOR(2)), (3, CBOR(-7)), (-2, .bytes(randomBytes(32)))])).dropLast(5))),
        ("with a duplicate label", [0xA2, 0x01, 0x02, 0x01, 0x02]), ("an indefinite map", [0xBF, 0x01, 0x02, 0x03, 0x26, 0xFF]),
        ("a byte string", CBOREncoder.encode(.bytes(randomBytes(65)))), ("nested 40 deep", Self.nestedMaps(40)),
        ("a 70 KB modulus", [0xA3, 0x01, 0x03, 0x03, 0x39, 0x01, 0x00, 0x20, 0x5A, 0x00, 0x01, 0x11, 0x70] + randomBytes(64)),
    ]

    /// Client data that is not the JSON object of a ceremony.
    static let brokenClientData: [(String, [UInt8])] = [
        ("empty", []), ("not JSON", Array("type=webauthn.create".utf8)), ("null", Array("null".utf8)), ("an array", Array("[]".utf8)),
        ("an empty object", Array("{}".utf8)), ("invalid UTF-8", [0x7B, 0xFF, 0xFE, 0x7D]),
        ("type a number", Array(#"{"type":1,"challenge":"AAAA","origin":"https://latchkey.test"}"#.utf8)),
        ("challenge missing", Array(#"{"type":"webauthn.create","origin":"https://latchkey.test"}"#.utf8)),
        ("challenge not base64url", Array(#"{"type":"webauthn.create","challenge":"!!","origin":"https://latchkey.test"}"#.utf8)),
        ("challenge a number", Array(#"{"type":"webauthn.create","challenge":12,"origin":"https://latchkey.test"}"#.utf8)),
        ("origin missing", Array(#"{"type":"webauthn.get","challenge":"AAAA"}"#.utf8)),
        ("origin null", Array(#"{"type":"webauthn.get","challenge":"AAAA","origin":null}"#.utf8)),
        ("crossOrigin a string", Array(#"{"type":"webauthn.get","challenge":"AAAA","origin":"https://latchkey.test","crossOrigin":"no"}"#.utf8)),
        ("a truncated object", Array(#"{"type":"webauthn.get","challenge":"#.utf8)),
        ("arrays nested 5000 deep", Array((String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)).utf8)),
        ("8 KiB of random bytes", randomBytes(8192)),
    ]

    /// The credential's JSON envelope broken around `field` (the response's binary member).
    static func brokenEnvelopes(field: String) -> [Mutation] {
        [
            Mutation(name: "credential a string") { _ in "credential" },
            Mutation(name: "credential an array") { _ in [Any]() },
            Mutation(name: "credential empty") { _ in [String: Any]() },
            Mutation(name: "response missing") { credential in credential.filter { $0.key != "response" } },
            Mutation(name: "response a string") { credential in credential.merging(["response": "response"]) { $1 } },
            Mutation(name: "rawId not base64url") { credential in credential.merging(["rawId": "*/+=", "id": "*/+="]) { $1 } },
            Mutation(name: "rawId missing") { credential in credential.filter { $0.key != "rawId" } },
            Mutation(name: "rawId empty") { credential in credential.merging(["rawId": "", "id": ""]) { $1 } },
            Mutation(name: "\(field) not base64url") { Self.setting($0, in: "response", field, "@@@@") },
            Mutation(name: "\(field) padded base64 with + and /") { Self.setting($0, in: "response", field, "+/+/+/==") },
            Mutation(name: "\(field) null") { Self.setting($0, in: "response", field, NSNull()) },
            Mutation(name: "\(field) missing") { credential in
                var response = credential["response"] as? [String: Any] ?? [:]
                response[field] = nil
                return credential.merging(["response": response]) { $1 }
            },
            Mutation(name: "clientDataJSON a number") { Self.setting($0, in: "response", "clientDataJSON", 1) },
        ]
    }

    // MARK: Helpers

    static func object(fmt: CBOR, statement: CBOR, authData: CBOR) -> CBOR {
        .map([
            CBOR.Entry(key: .text("fmt"), value: fmt), CBOR.Entry(key: .text("attStmt"), value: statement),
            CBOR.Entry(key: .text("authData"), value: authData),
        ])
    }

    static func nestedMaps(_ depth: Int) -> [UInt8] {
        Array(repeating: [0xA1, 0x01], count: depth).flatMap { $0 } + [0x01]
    }

    static func object(_ json: Data) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: json) as? [String: Any] else { throw TestFailure("not a JSON object") }
        return object
    }

    static func body(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed]), as: UTF8.self)
    }

    /// `credential` with its response's base64url member `field` replaced by `change` of its bytes.
    static func replacing(_ credential: [String: Any], _ field: String, _ change: ([UInt8]) throws -> [UInt8]) throws -> [String: Any] {
        let text = try #require((credential["response"] as? [String: Any])?[field] as? String)
        let bytes = try #require(LatchkeyAPI.Base64URL.decode(text))
        return Self.setting(credential, in: "response", field, LatchkeyAPI.Base64URL.encode(try change(bytes)))
    }

    static func setting(_ credential: [String: Any], in member: String, _ field: String, _ value: Any) -> [String: Any] {
        var inner = credential[member] as? [String: Any] ?? [:]
        inner[field] = value
        return credential.merging([member: inner]) { $1 }
    }
}

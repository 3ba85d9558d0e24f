import Foundation
import JWTKit

/// One JSON value of a JWT's claims, as an identity provider sent it.
enum ClaimValue: Codable, Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([ClaimValue])
    case object([String: ClaimValue])
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([ClaimValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: ClaimValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}

/// The claims of an identity provider's token (Apple's identity token, a Clerk session token, any OIDC
/// ID token), kept as sent: which claims matter, and how, is decided by ``IdentityTokenVerifier`` and its
/// callers against the injected clock — jwt-kit only checks the signature.
struct IdentityClaims: JWTPayload, Equatable {
    let values: [String: ClaimValue]

    init(values: [String: ClaimValue]) { self.values = values }

    init(from decoder: any Decoder) throws {
        self.values = try decoder.singleValueContainer().decode([String: ClaimValue].self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.values)
    }

    /// Time and audience rules are checked by the caller, against its clock.
    func verify(using algorithm: some JWTAlgorithm) async throws {}

    func string(_ name: String) -> String? {
        if case .string(let value) = self.values[name] { return value }
        return nil
    }

    /// A NumericDate claim (seconds since 1970).
    func seconds(_ name: String) -> Double? {
        if case .number(let value) = self.values[name] { return value }
        return nil
    }

    /// A boolean claim that some providers (Apple) send as `"true"`/`"false"` strings.
    func flag(_ name: String) -> Bool? {
        switch self.values[name] {
        case .bool(let value): value
        case .string("true"): true
        case .string("false"): false
        default: nil
        }
    }

    /// `aud` as a list: a string or an array of strings.
    var audiences: [String] {
        switch self.values["aud"] {
        case .string(let value): [value]
        case .array(let values): values.compactMap { if case .string(let value) = $0 { value } else { nil } }
        default: []
        }
    }
}

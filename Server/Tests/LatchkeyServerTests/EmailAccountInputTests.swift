import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The email routes' JSON bodies.
enum EmailRoute: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case register = "register"
    case verifyEmail = "verify-email"
    case resendVerification = "resend-verification"
    case login = "login"
    case resetPassword = "reset-password"
    case confirmReset = "reset-password/confirm"
    case changePassword = "change-password"

    var path: String { "/api/v1/auth/" + self.rawValue }

    /// The string fields the route reads.
    var fields: [String] {
        switch self {
        case .register, .login: ["email", "password"]
        case .verifyEmail: ["email", "code"]
        case .resendVerification, .resetPassword: ["email"]
        case .confirmReset: ["email", "code", "new_password"]
        case .changePassword: ["current_password", "new_password"]
        }
    }

    /// A well-formed body of the route.
    var validBody: String { self.body { $0 == "email" ? #""ann@example.test""# : $0 == "code" ? #""123456""# : #""correct horse battery""# } }

    func body(_ value: (String) -> String) -> String { "{" + self.fields.map { "\"\($0)\": \(value($0))" }.joined(separator: ", ") + "}" }

    var testDescription: String { "POST \(self.path)" }
}

/// Email accounts switched off, and bodies the email routes must refuse: each a 4xx with the error envelope.
struct EmailAccountInputTests {
    @Test(arguments: EmailRoute.allCases)
    func withoutAnSMTPHostEveryEmailRouteAnswersNotFoundNamingTheSetting(route: EmailRoute) async throws {
        try await withServer(.live) { client, _ in
            let device = try await client.registerDevice()
            let response = try await client.send(.post, route.path, bearer: device.accessToken, json: route.validBody)
            #expect(response.status == .notFound)
            #expect(response.envelope?.error.code == .notFound)
            #expect(response.envelope?.error.message.contains("smtp.host") == true)
        }
    }

    @Test(arguments: ["/api/v1/auth/verify-email?token=abc", "/api/v1/auth/reset-password?token=abc"])
    func withoutAnSMTPHostTheLinkPagesAnswerNotFound(uri: String) async throws {
        try await withServer(.live) { client, _ in
            let response = try await client.send(.get, uri)
            #expect(response.status == .notFound)
            #expect(response.headers[.contentType]?.hasPrefix("text/html") == true)
        }
    }

    @Test(arguments: EmailRoute.allCases)
    func badBodiesAreRefusedWithTheEnvelope(route: EmailRoute) async throws {
        let port = try await unusedPort()
        let configure: (inout LatchkeyConfiguration) -> Void = { configuration in
            configuration.useMailRelay(port: port)  // nothing is mailed
            configuration.accountLimits.email.limit = 0
            configuration.accountLimits.passwordLogin.limit = 0
        }
        let huge = String(repeating: "a", count: 50_000)
        let bodies = [
            ("malformed JSON", "{"), ("empty body", ""), ("an array", "[]"), ("null", "null"), ("no fields", "{}"),
            ("numbers for strings", route.body { _ in "12345" }), ("objects for strings", route.body { _ in #"{"$ne": ""}"# }),
            ("a huge address", route.body { $0 == "email" ? "\"\(huge)@example.test\"" : #""correct horse battery""# }),
            ("huge strings", route.body { _ in "\"\(huge)\"" }),
            ("over the body limit", route.body { _ in "\"\(huge)\(huge)\"" }),
        ]
        try await withServer(.live, configure: configure) { client, _ in
            let device = try await client.registerDevice()
            for (label, body) in bodies {
                let response = try await client.send(.post, route.path, bearer: route == .changePassword ? device.accessToken : nil, json: body)
                #expect((400..<500).contains(response.status.code), "\(label): \(response.status)")
                #expect(response.envelope != nil, "\(label): \(response.text.prefix(200))")
            }
        }
    }
}

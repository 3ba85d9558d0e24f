import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import NIOCore
import Testing

/// Posts `{"email": email}` to `path` (a route that may mail the address: `resend-verification`, `reset-password`)
/// `count` times at once on separate connections, expects each to be answered 202, and returns how many mails to
/// `email` the outbox holds then.
func racingMailRequests(
    _ count: Int, to path: String, for email: String, client: some TestClientProtocol, server: TestServer,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> Int {
    let body = try JSONEncoder().encode(EmailAddressRequest(email: email))
    let answers = try await racing(count, port: try #require(client.port)) { _ in
        .init(path, method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(bytes: body))
    }
    #expect(answers.allSatisfy { $0.status == .accepted }, "\(answers)", sourceLocation: sourceLocation)
    return try await server.services.store.outbox(limit: 100, pendingOnly: false).filter { $0.recipient == email }.count
}

import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import NIOCore

/// The answer to one of ``racing(_:port:_:)``'s requests: its status and error code.
struct RacedAnswer: Sendable, Equatable {
    let status: HTTPResponse.Status
    let code: ErrorCode?
}

/// Sends `count` requests at once to the live server on `port`, each on a connection of its own: a test client sends its
/// requests one after another on one connection, which the server answers in turn, so only separate connections race.
func racing(_ count: Int, port: Int, _ request: @escaping @Sendable (Int) -> TestClient.Request) async throws -> [RacedAnswer] {
    try await withThrowingTaskGroup(of: RacedAnswer.self) { group in
        for index in 0..<count {
            group.addTask {
                try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
                    let response = try await client.execute(request(index))
                    let envelope = response.body.flatMap { try? JSONDecoder().decode(ErrorEnvelope.self, from: Data($0.readableBytesView)) }
                    return RacedAnswer(status: response.status, code: envelope?.error.code)
                }
            }
        }
        return try await group.reduce(into: []) { $0.append($1) }
    }
}

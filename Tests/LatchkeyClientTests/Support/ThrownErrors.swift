import Foundation
import LatchkeyAPI
import LatchkeyClient

/// The ``LatchkeyError`` `body` throws; `nil` when it throws nothing or something else.
func thrownError(_ body: () async throws -> some Any) async -> LatchkeyError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error as? LatchkeyError
    }
}

/// The code of the ``LatchkeyError`` `body` throws; `nil` when it throws none, or one without a code.
func thrownCode(_ body: () async throws -> some Any) async -> ErrorCode? {
    await thrownError(body)?.code
}

extension LatchkeyError {
    /// A refusal with `status`, `code` and `message`, as the SDK builds it from a server's answer.
    static func refusal(_ status: Int?, _ code: ErrorCode?, _ message: String) -> LatchkeyError {
        .rejected(Details(status: status, code: code, message: message))
    }

    /// A server failure with `status`, `code` and `message`.
    static func failure(_ status: Int, _ code: ErrorCode?, _ message: String) -> LatchkeyError {
        .server(Details(status: status, code: code, message: message))
    }
}

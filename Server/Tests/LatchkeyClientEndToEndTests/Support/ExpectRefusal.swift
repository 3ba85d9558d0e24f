import LatchkeyAPI
import LatchkeyClient
import Testing

/// Expects `body` to throw ``LatchkeyError/rejected(_:)`` with `code` (and, for `weak_password`, `reason`).
func expectRefusal(
    _ code: ErrorCode, reason: WeakPasswordReason? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> some Any
) async {
    let error = await #expect(throws: LatchkeyError.self, sourceLocation: sourceLocation) { _ = try await body() }
    guard case .rejected(let details) = error else {
        Issue.record("expected a refusal with \(code), got \(String(describing: error))", sourceLocation: sourceLocation)
        return
    }
    #expect(details.code == code, sourceLocation: sourceLocation)
    if let reason { #expect(details.weakPasswordReason == reason, sourceLocation: sourceLocation) }
}

import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// Where the signed-in user is signed in (`GET /api/v1/users/me/sessions`): the user's live sessions, newest first,
    /// each with how it began and the day it was last used; this app's own is `AccountSession.current`.
    ///
    /// - Throws: ``LatchkeyError/notSignedIn`` and the errors of ``send(_:)``.
    public func sessions() async throws -> [AccountSession] {
        try await self.send(.get("/api/v1/users/me/sessions", auth: .bearer), decoding: AccountSessionsResponse.self).sessions
    }

    /// Ends one of the signed-in user's sessions (`DELETE /api/v1/users/me/sessions/{id}`), as signing out there would:
    /// its refresh token stops working and its apps' live events hear that it was revoked.
    ///
    /// Ending this app's own session (the `AccountSession.current` one) is allowed: it is then signed out here too
    /// (state ``AuthState/signedOut(reason:)``), unless another session replaced it while the call was on its way.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `not_found` when the ID is not one of the user's live sessions (nothing
    ///   changed), ``LatchkeyError/invalidRequest(_:)`` without sending anything for an ID that cannot be a path segment,
    ///   and the errors of ``send(_:)``.
    public func endSession(id: String) async throws {
        let path = "/api/v1/users/me/sessions/\(try LatchkeyRequest.pathSegment(id, naming: "session"))"
        let generation = self.generation
        let current = (try? self.loadCredentials())?.session?.sessionID
        _ = try await self.send(LatchkeyRequest(method: "DELETE", path: path, auth: .bearer))
        if generation == self.generation, let current, current.caseInsensitiveCompare(id) == .orderedSame {
            self.endSession(.signedOut(reason: .requested), reason: .requested)
        }
    }

    /// Everything the server holds about the signed-in user (`GET /api/v1/users/me/export`, for GDPR Art. 15 and 20
    /// requests), as the server wrote it: the raw JSON, to hand to the person or save as a file unchanged. Decode it
    /// as `AccountExport` (ISO 8601 dates) to read it.
    ///
    /// It needs a recent sign-in, which the request's proof of the device key gives when the session was started with
    /// it.
    ///
    /// - Throws: ``LatchkeyError/rejected(_:)`` `reauthentication_required` (sign in again), `forbidden` for a guest,
    ///   ``LatchkeyError/notSignedIn``, and the errors of ``send(_:)``.
    public func exportAccount() async throws -> Data {
        var request = LatchkeyRequest.get("/api/v1/users/me/export", auth: .bearer)
        request.provesDevice = true
        return try await self.send(request).body
    }
}

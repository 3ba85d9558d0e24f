import Foundation

extension LatchkeySession {
    /// A sign-in waiting for its turn or running (see ``serializedSignIn(_:_:)``).
    struct SignInFlight {
        let id: UUID
        /// The call and its arguments, hashed: a call with the same key joins this one.
        let key: String
        let task: Task<any Sendable, any Error>
    }

    /// Runs a sign-in after every sign-in started before it, so that two never overlap: a later one starts once the
    /// earlier one's session is in place, and replaces it.
    ///
    /// A call made while the same call with the same arguments (`parts`) waits or runs joins it and gets its result or
    /// error: a double-tapped "Play" (two `registerDevice()`) makes one session, not two. A call made after that one
    /// finished runs again. The sign-in runs in a task of its own, so a caller that is cancelled does not lose the session
    /// the server issued.
    func serializedSignIn<Result: Sendable>(
        _ parts: [String?], _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        // Hashed: the key may be built from a password or a token, and is kept while the sign-in runs.
        let key = SHA256Hex.digest(parts.map { $0.map { "1" + $0 } ?? "0" }.joined(separator: "\n"))
        if let joined = self.signInsInFlight.first(where: { $0.key == key }) { return try await Self.value(of: joined.task) }
        let previous = self.signInsInFlight.last?.task
        let task = Task<any Sendable, any Error> {
            _ = await previous?.result
            return try await operation()
        }
        let id = UUID()
        self.signInsInFlight.append(SignInFlight(id: id, key: key, task: task))
        defer { self.signInsInFlight.removeAll { $0.id == id } }
        return try await Self.value(of: task)
    }

    private static func value<Result: Sendable>(of task: Task<any Sendable, any Error>) async throws -> Result {
        // Every flight with a key returns the type of the call the key names.
        guard let value = try await task.value as? Result else { throw LatchkeyError.invalidResponse }
        return value
    }
}

/// What both observable models do: follow a session's states and events on the main actor.
enum SessionFollower {
    /// Calls `state` with each state and `rateLimited` with each rate limit until the calling task is cancelled.
    @MainActor
    static func follow(
        _ session: LatchkeySession, state: @escaping @MainActor (AuthState) -> Void, rateLimited: @escaping @MainActor (RateLimitInfo) -> Void
    ) async {
        let events = await session.events()
        let states = await session.authStates()
        let following = Task { @MainActor in
            for await event in events { if case .rateLimited(let info) = event { rateLimited(info) } }
        }
        defer { following.cancel() }
        for await next in states { state(next) }
    }
}

#if canImport(Observation)
import Foundation
import Observation

/// The auth state for SwiftUI: an `@Observable` mirror of a ``LatchkeySession``.
///
/// ```swift
/// @State var auth = AuthModel(session: session)
/// var body: some View {
///     RootView(state: auth.state).task { await auth.observe() }
/// }
/// ```
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
@Observable
public final class AuthModel {
    /// The session's current state.
    public private(set) var state: AuthState = .restoring
    /// The last rate limit the server reported, for a "try again in…" message.
    public private(set) var lastRateLimit: RateLimitInfo?
    /// The session this model mirrors.
    @ObservationIgnored public let session: LatchkeySession

    /// Mirrors `session`; call ``observe()`` (e.g. from `.task`) to start following it.
    public init(session: LatchkeySession) { self.session = session }

    /// Follows the session's states and events until the calling task is cancelled.
    public func observe() async {
        let events = await self.session.events()
        let states = await self.session.authStates()
        let following = Task { @MainActor in
            for await event in events { if case .rateLimited(let info) = event { self.lastRateLimit = info } }
        }
        defer { following.cancel() }
        for await state in states { self.state = state }
    }
}
#endif

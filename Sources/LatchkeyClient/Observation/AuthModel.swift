#if canImport(Observation)
import Foundation
import Observation

/// The auth state for SwiftUI on iOS 17 / macOS 14 and later: an `@Observable` mirror of a ``LatchkeySession``
/// (`AuthObservableObject` is the same for iOS 16 / macOS 13).
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
        await SessionFollower.follow(self.session, state: { self.state = $0 }, rateLimited: { self.lastRateLimit = $0 })
    }
}
#endif

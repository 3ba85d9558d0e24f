#if canImport(Combine)
import Combine
import Foundation

/// The auth state for SwiftUI apps on iOS 16 / macOS 13: an `ObservableObject` mirror of a ``LatchkeySession``, for
/// `@StateObject` and `@EnvironmentObject` (seed 002). On iOS 17 and later, ``AuthModel`` does the same with Observation.
///
/// ```swift
/// @StateObject var auth = AuthObservableObject(session: session)
/// var body: some Scene {
///     WindowGroup { RootView().environmentObject(auth).task { await auth.observe() } }
/// }
/// // in a view: @EnvironmentObject var auth: AuthObservableObject; switch auth.state { … }
/// ```
@MainActor
public final class AuthObservableObject: ObservableObject {
    /// The session's current state.
    @Published public private(set) var state: AuthState = .restoring
    /// The last rate limit the server reported, for a "try again in…" message.
    @Published public private(set) var lastRateLimit: RateLimitInfo?
    /// The session this object mirrors.
    public let session: LatchkeySession

    /// Mirrors `session`; call ``observe()`` (e.g. from `.task`) to start following it.
    public init(session: LatchkeySession) { self.session = session }

    /// Follows the session's states and events until the calling task is cancelled.
    public func observe() async {
        await SessionFollower.follow(self.session, state: { self.state = $0 }, rateLimited: { self.lastRateLimit = $0 })
    }
}
#endif

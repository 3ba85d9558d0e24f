/// A stand-in for clerk-ios 1.x's `Clerk`, with the shapes ``SabaiPicsAuth`` uses and nothing more: the main-actor
/// `Clerk.shared`, `configure(publishableKey:)`, `session?.getToken(_:)` answering the JWT as `String?` (1.x; older
/// versions answered a `TokenResource?`), and `authEventEmitter.events`. No `load()`: 1.x restores its session itself.
@MainActor
final class Clerk {
    static let shared = Clerk()

    /// What `configure(publishableKey:)` was given.
    private(set) var publishableKey: String?
    /// The signed-in session; `nil` when signed out.
    var session: Session?
    /// Sign-ins, sign-ups and sign-outs, as they happen.
    let authEventEmitter = AuthEventEmitter()

    func configure(publishableKey: String) { self.publishableKey = publishableKey }

    /// A Clerk session; the tests say which token it hands out.
    struct Session {
        var token: String?

        /// `Session.GetTokenOptions` of clerk-ios.
        struct GetTokenOptions {
            var template: String?
            var expirationBuffer: Double
            var skipCache: Bool

            init(template: String? = nil, expirationBuffer: Double = 10, skipCache: Bool = false) {
                self.template = template
                self.expirationBuffer = expirationBuffer
                self.skipCache = skipCache
            }
        }

        func getToken(_ options: GetTokenOptions = .init()) async throws -> String? { self.token }
    }

    enum AuthEvent {
        case signInCompleted
        case signUpCompleted
        case signedOut
    }

    final class AuthEventEmitter: Sendable {
        let events: AsyncStream<AuthEvent>
        private let continuation: AsyncStream<AuthEvent>.Continuation

        init() { (self.events, self.continuation) = AsyncStream<AuthEvent>.makeStream() }

        /// What Clerk does after a sign-in, sign-up or sign-out.
        func send(_ event: AuthEvent) { self.continuation.yield(event) }
    }
}

import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A claims hook over real HTTP on 127.0.0.1: it answers every call as its ``Behaviour`` says and keeps what it was sent.
final class ClaimsHookPeer: Sendable {
    enum Behaviour: Sendable {
        /// 200 with this JSON body.
        case answer(String)
        /// This status, no body.
        case status(Int)
        /// No answer for far longer than any test's `hooks.claims.timeout`.
        case silent
    }

    /// The `hooks.claims.secret` of the tests: `whsec_` and base64 of 32 bytes of 9.
    static let secret = "whsec_" + Data(repeating: 9, count: 32).base64EncodedString()

    struct Call: Sendable {
        var headers: HTTPFields
        var body: Data
    }

    private let behaviour: Mutex<Behaviour>
    private let received = Mutex<[Call]>([])

    private init(_ behaviour: Behaviour) { self.behaviour = Mutex(behaviour) }

    /// Answers the calls from now on as `behaviour` says.
    func behave(_ behaviour: Behaviour) { self.behaviour.withLock { $0 = behaviour } }

    /// The calls so far.
    var calls: [Call] { self.received.withLock { $0 } }

    /// Runs a peer for the length of `body`, which gets its URL.
    static func with<T: Sendable>(_ behaviour: Behaviour, _ body: @Sendable (String, ClaimsHookPeer) async throws -> T) async throws -> T {
        let peer = ClaimsHookPeer(behaviour)
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let buffer = try await request.body.collect(upTo: 1 << 20)
            peer.received.withLock { $0.append(Call(headers: request.headers, body: Data(buffer.readableBytesView))) }
            switch peer.behaviour.withLock({ $0 }) {
            case .answer(let json):
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: json)))
            case .status(let code): return Response(status: .init(code: code))
            case .silent:
                try? await Task.sleep(for: .seconds(3))
                return Response(status: .ok)
            }
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: Self.quietLogger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await app.runService()
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw TestFailure("the claims hook peer did not start") }
            do {
                let result = try await body("http://127.0.0.1:\(port)/hook", peer)
                group.cancelAll()
                return result
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }

    /// The peer's shutdown (cancelled mid-call) is nothing a test should print.
    private static var quietLogger: Logger {
        var logger = Logger(label: "claims-hook-peer")
        logger.logLevel = .critical
        return logger
    }

    /// Whether `call` carries a valid Standard Webhooks signature made with ``secret``.
    static func isSigned(_ call: Call) -> Bool {
        guard let id = call.headers[HTTPField.Name("webhook-id")!], let timestamp = call.headers[HTTPField.Name("webhook-timestamp")!],
            let signature = call.headers[HTTPField.Name("webhook-signature")!], signature.hasPrefix("v1,"),
            let key = Data(base64Encoded: String(Self.secret.dropFirst(6)))
        else { return false }
        var signed = Data("\(id).\(timestamp).".utf8)
        signed.append(call.body)
        let expected = Data(HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: key))).base64EncodedString()
        return signature.dropFirst(3) == expected
    }
}

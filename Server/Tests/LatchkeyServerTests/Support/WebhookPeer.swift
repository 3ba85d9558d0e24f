import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyServer
import NIOCore
import ServiceLifecycle
import Synchronization
import Testing

/// An app's backend on a real socket (127.0.0.1): it records every request it is sent, answers each with the status
/// (and body) the test set, and checks the Standard Webhooks signature on its own — HMAC-SHA256 over
/// `"{webhook-id}.{webhook-timestamp}.{body}"` keyed with the base64 decoding of what follows `whsec_`, compared with
/// each `v1,<base64>` of `webhook-signature` — with swift-crypto, never with the server's code. Webhook endpoints and
/// the claims hook are both played by it.
final class WebhookPeer: Sendable {
    /// One request as received.
    struct Delivery: Sendable {
        let path: String
        let id: String
        let timestamp: String
        let signature: String
        let body: Data
        /// Whether `webhook-signature` holds a `v1` signature made with the receiver's secret over this request.
        let verified: Bool

        /// The body as a JSON object (`{"type", "timestamp", "data"}` for a webhook).
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: self.body)) as? [String: Any] ?? [:] }
        var type: String? { self.json["type"] as? String }
        var data: [String: Any] { self.json["data"] as? [String: Any] ?? [:] }
        var text: String { String(decoding: self.body, as: UTF8.self) }
    }

    /// How the receiver answers one request.
    enum Answer: Sendable {
        case status(Int)
        /// 200 with this JSON body (the claims hook's `{"claims": {…}}`).
        case json(String)
        /// Never answers (until the receiver stops): a hook past its timeout.
        case hang
    }

    let secret: String
    /// The server's clock, moved a second each 50 ms while a wait goes on (so its deliverer's poll runs), or nil.
    private let driven = Mutex<ManualClock?>(nil)
    private let stopped = Atomic<Bool>(false)
    private let listeningAt = Mutex<String>("")
    private let state = Mutex<(deliveries: [Delivery], queued: [Answer], otherwise: Answer)>(([], [], .status(204)))

    /// A receiver whose signing secret is `secret` (`whsec_` + base64), a new random one by default.
    init(secret: String = WebhookPeer.newSecret()) {
        self.secret = secret
    }

    /// A fresh `whsec_` secret of 32 random bytes.
    static func newSecret() -> String {
        "whsec_" + Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }).base64EncodedString()
    }

    var deliveries: [Delivery] { self.state.withLock { $0.deliveries } }

    /// `http://127.0.0.1:<port>` while it listens.
    var baseURL: String { self.listeningAt.withLock { $0 } }

    /// Moves `clock` a second every 50 ms while a wait goes on, as time passes for a real server (nil: never). Tests of
    /// the retry schedule move the clock themselves instead.
    func drive(_ clock: ManualClock?) { self.driven.withLock { $0 = clock } }

    /// Answers the next requests with `answers`, one each, then with `otherwise` (204 unless set).
    func answer(_ answers: [Answer], otherwise: Answer? = nil) {
        self.state.withLock { state in
            state.queued += answers
            if let otherwise { state.otherwise = otherwise }
        }
    }

    func answerAlways(_ answer: Answer) { self.state.withLock { $0.otherwise = answer } }

    /// The deliveries of event type `type`.
    func deliveries(ofType type: String) -> [Delivery] { self.deliveries.filter { $0.type == type } }

    /// Waits (in real time, up to `seconds`) until `condition` holds for what was received; returns it.
    @discardableResult
    func waitFor(
        within seconds: Double = 10, _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: ([Delivery]) -> Bool
    ) async throws -> [Delivery] {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let received = self.deliveries
            if condition(received) { return received }
            guard ContinuousClock.now < deadline else {
                throw TestFailure("waited \(seconds) s for \(what); received: \(received.map { "\($0.type ?? "?") \($0.text)" })")
            }
            try await Task.sleep(for: .milliseconds(50))
            self.driven.withLock { $0 }?.advance(by: 1)
        }
    }

    /// Waits until `count` requests in all were received.
    @discardableResult
    func waitFor(count: Int, within seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [Delivery] {
        try await self.waitFor(within: seconds, "\(count) requests", sourceLocation: sourceLocation) { $0.count >= count }
    }

    /// Waits for a delivery of `type` whose data matches `data` (each key's value as a string); returns the first.
    @discardableResult
    func waitFor(
        _ type: String, data: [String: String] = [:], within seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Delivery {
        let matching = { (delivery: Delivery) in
            delivery.type == type && data.allSatisfy { key, value in (delivery.data[key] as? String) == value }
        }
        let received = try await self.waitFor(within: seconds, "\(type) \(data)", sourceLocation: sourceLocation) { $0.contains(where: matching) }
        return received.first(where: matching)!
    }

    /// Whether `signature` (space-separated `v1,<base64>` entries) holds the HMAC of `id.timestamp.body` under `secret`.
    static func verify(secret: String, id: String, timestamp: String, body: Data, signature: String) -> Bool {
        guard secret.hasPrefix("whsec_"), let key = Data(base64Encoded: String(secret.dropFirst("whsec_".count))) else { return false }
        let signed = Data("\(id).\(timestamp).".utf8) + body
        let expected = Data(HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: key)))
        return signature.split(separator: " ").contains { entry in
            let parts = entry.split(separator: ",", maxSplits: 1)
            guard parts.count == 2, parts[0] == "v1", let given = Data(base64Encoded: String(parts[1])) else { return false }
            return given == expected
        }
    }

    /// Runs `body` with the receiver's base URL (`http://127.0.0.1:<port>`) while it listens on `port` (any free port
    /// when 0); stops listening after it.
    func listening<T: Sendable>(port: Int = 0, _ body: @escaping @Sendable (String) async throws -> T) async throws -> T {
        let router = Router()
        router.post("**") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            let data = Data(buffer: bytes)
            let id = request.headers[HTTPField.Name("webhook-id")!] ?? ""
            let timestamp = request.headers[HTTPField.Name("webhook-timestamp")!] ?? ""
            let signature = request.headers[HTTPField.Name("webhook-signature")!] ?? ""
            let delivery = Delivery(
                path: request.uri.path, id: id, timestamp: timestamp, signature: signature, body: data,
                verified: Self.verify(secret: self.secret, id: id, timestamp: timestamp, body: data, signature: signature))
            let answer = self.state.withLock { state in
                state.deliveries.append(delivery)
                return state.queued.isEmpty ? state.otherwise : state.queued.removeFirst()
            }
            switch answer {
            case .status(let code):
                return Response(status: HTTPResponse.Status(code: code))
            case .json(let text):
                return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
            case .hang:
                while !self.stopped.load(ordering: .relaxed) { try? await Task.sleep(for: .milliseconds(20)) }
                return Response(status: .gatewayTimeout)
            }
        }
        // Run by hand rather than by HummingbirdTesting's live client, which binds a free port whatever is asked: a receiver
        // that comes back must come back on the port the server was given.
        let (ports, bound) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                bound.yield(channel.localAddress?.port ?? 0)
                bound.finish()
            }, logger: TestServer.quietLogger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: TestServer.quietLogger))
        self.stopped.store(false, ordering: .relaxed)
        let running = Task {
            defer { bound.finish() }  // a receiver that could not start ends the wait for its port
            try await group.run()
        }
        defer { running.cancel() }
        var iterator = ports.makeAsyncIterator()
        guard let listening = await iterator.next(), listening != 0 else {
            running.cancel()
            throw TestFailure("the webhook receiver did not start listening on port \(port)")
        }
        self.listeningAt.withLock { $0 = "http://127.0.0.1:\(listening)" }
        do {
            let result = try await body("http://127.0.0.1:\(listening)")
            self.stopped.store(true, ordering: .relaxed)
            await group.triggerGracefulShutdown()
            try await running.value
            return result
        } catch {
            self.stopped.store(true, ordering: .relaxed)
            await group.triggerGracefulShutdown()
            _ = try? await running.value
            throw error
        }
    }
}

import Foundation
import LatchkeyAPI
import LatchkeyClient

/// A WebSocket transport whose server is the test: each connect follows a script, and each socket it opens is handed to
/// the test (``opened``) to push frames into and read what the client sent. No network, no sleeping.
final class FakeWebSocketTransport: WebSocketTransport, @unchecked Sendable {
    /// What one connect does.
    enum Step {
        /// Opens a socket.
        case open
        /// Refuses the upgrade with `status` (and `headers`).
        case refuse(Int, headers: [String: String] = [:])
        /// Fails as if no server answered.
        case fail
        /// Fails as a platform without WebSockets does.
        case unsupported
    }

    private let lock = NSLock()
    private var script: [Step]
    private var recorded: [TransportRequest] = []
    /// The sockets opened, in order.
    let opened = AsyncQueue<FakeWebSocket>()

    /// Connects follow `script`; once it is used up, each connect opens a socket.
    init(_ script: [Step] = []) { self.script = script }

    func connect(_ request: TransportRequest) async throws -> any WebSocketConnection {
        let step = self.lock.withLock { () -> Step in
            self.recorded.append(request)
            return self.script.isEmpty ? .open : self.script.removeFirst()
        }
        switch step {
        case .open:
            let socket = FakeWebSocket(request: request)
            self.opened.push(socket)
            return socket
        case .refuse(let status, let headers): throw WebSocketTransportError.refused(TransportResponse(status: status, headers: headers))
        case .fail: throw URLError(.cannotConnectToHost)
        case .unsupported: throw WebSocketTransportError.unsupported("no WebSockets in this test")
        }
    }

    /// Every connect's request, in order.
    var requests: [TransportRequest] { self.lock.withLock { self.recorded } }
}

/// One socket of ``FakeWebSocketTransport``: the test is its server.
final class FakeWebSocket: WebSocketConnection, @unchecked Sendable {
    let request: TransportRequest
    private let incoming = AsyncQueue<WebSocketMessage>()
    /// The texts the client sent, in order.
    let sent = AsyncQueue<String>()
    private let lock = NSLock()
    private var isClosed = false
    private let closes = AsyncQueue<Void>()

    init(request: TransportRequest) { self.request = request }

    func receive() async throws -> WebSocketMessage { try await self.incoming.next() }
    func send(_ text: String) async throws { self.sent.push(text) }
    func close() {
        self.lock.withLock { self.isClosed = true }
        self.closes.push(())
        self.incoming.push(.closed(code: 1000))
    }

    /// Whether the client closed it.
    var isClosedByClient: Bool { self.lock.withLock { self.isClosed } }

    /// Returns once the client closed it.
    func closedByClient() async throws { try await self.closes.next() }

    /// The server sends a frame of `type` with `fields` (snake_case keys, as on the wire).
    func push(_ type: String, _ fields: [String: Any] = [:]) {
        var object = fields
        object["type"] = type
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        self.push(text: String(decoding: data, as: UTF8.self))
    }

    /// The server sends `text` as it is.
    func push(text: String) { self.incoming.push(.text(text)) }

    /// The server closes the connection with `code`.
    func close(code: UInt16?) { self.incoming.push(.closed(code: code)) }

    /// The next frame the client sent, as a JSON object.
    func nextSentFrame() async throws -> [String: Any] {
        let text = try await self.sent.next()
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? ["unreadable": text]
    }
}

/// A queue whose `next()` waits until something was pushed, or its task is cancelled (a test past its time limit).
final class AsyncQueue<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer: [Element] = []
    private var waiters: [UUID: CheckedContinuation<Element, any Error>] = [:]

    func push(_ element: Element) {
        let waiter = self.lock.withLock { () -> CheckedContinuation<Element, any Error>? in
            guard let id = self.waiters.keys.first else {
                self.buffer.append(element)
                return nil
            }
            return self.waiters.removeValue(forKey: id)
        }
        waiter?.resume(returning: element)
    }

    func next() async throws -> Element {
        let id = UUID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let element = self.lock.withLock { () -> Element? in
                    if self.buffer.isEmpty {
                        self.waiters[id] = continuation
                        return nil
                    }
                    return self.buffer.removeFirst()
                }
                if let element { continuation.resume(returning: element) }
                if Task.isCancelled { self.cancel(id) }
            }
        } onCancel: {
            self.cancel(id)
        }
    }

    private func cancel(_ id: UUID) {
        self.lock.withLock { self.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
    }

    /// What was pushed and not taken yet.
    var pending: [Element] { self.lock.withLock { self.buffer } }
}

import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``WebSocketTransport`` over `URLSessionWebSocketTask`.
///
/// On Apple platforms it works as it is. On Linux, FoundationNetworking opens WebSockets through the system's libcurl,
/// which must have been built with WebSocket support (curl 8.11 or later has it by default; Debian 12's 7.88 and
/// Ubuntu 24.04's 8.5 do not): without it every connection fails with ``WebSocketTransportError/Code/unsupported``,
/// and ``LatchkeySession/liveEvents()`` ends at once with ``LiveEventsEnd/unsupported(_:)`` instead of retrying. Even
/// with it, FoundationNetworking reports close codes outside RFC 6455's (4001, 4002, 4008) as 1003.
/// Like ``URLSessionTransport``, it never follows a redirect: the upgrade carries the access token.
public struct URLSessionWebSocketTransport: WebSocketTransport, @unchecked Sendable {
    private let session: URLSession

    /// Uses `session`; by default an ephemeral session (no cookies, no cache) that refuses redirects.
    public init(session: URLSession? = nil) {
        if let session {
            self.session = session
        } else {
            let configuration = URLSessionConfiguration.ephemeral
            // The server pings every 30 seconds; a connection silent for twice that is gone.
            configuration.timeoutIntervalForRequest = 60
            configuration.httpCookieStorage = nil
            configuration.urlCache = nil
            self.session = URLSession(configuration: configuration, delegate: URLSessionTransport.redirects, delegateQueue: nil)
        }
    }

    /// Resumes a `URLSessionWebSocketTask` for `request` and returns at once; a refused upgrade is thrown by the first
    /// ``WebSocketConnection/receive()``.
    public func connect(_ request: TransportRequest) async throws -> any WebSocketConnection {
        let task = self.session.webSocketTask(with: URLSessionTransport.urlRequest(request))
        task.resume()
        return URLSessionWebSocketConnection(task: task)
    }
}

/// One `URLSessionWebSocketTask`.
private struct URLSessionWebSocketConnection: WebSocketConnection, @unchecked Sendable {
    let task: URLSessionWebSocketTask

    func receive() async throws -> WebSocketMessage {
        do {
            switch try await self.task.receive() {
            case .string(let text): return .text(text)
            case .data(let data): return .text(String(decoding: data, as: UTF8.self))
            @unknown default: return .text("")
            }
        } catch {
            if let failure = self.failure(error) { throw failure }
            if self.task.closeCode != .invalid { return .closed(code: UInt16(clamping: self.task.closeCode.rawValue)) }
            throw error
        }
    }

    func send(_ text: String) async throws {
        do {
            try await self.task.send(.string(text))
        } catch {
            throw self.failure(error) ?? error
        }
    }

    func close() { self.task.cancel(with: .normalClosure, reason: nil) }

    /// What a failed receive or send means: a close, a refused upgrade, or a platform without WebSockets.
    private func failure(_ error: any Error) -> (any Error)? {
        if let http = self.task.response as? HTTPURLResponse, http.statusCode != 101 {
            return WebSocketTransportError.refused(TransportResponse(status: http.statusCode, headers: URLSessionTransport.headers(of: http)))
        }
        let error = error as NSError
        if error.domain == NSURLErrorDomain, error.code == NSURLErrorUnsupportedURL {
            return WebSocketTransportError.unsupported(
                "URLSession cannot open \(self.task.originalRequest?.url?.scheme ?? "ws") URLs (on Linux: a libcurl without WebSockets).")
        }
        return nil
    }
}

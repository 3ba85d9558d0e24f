import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ``HTTPTransport`` over `URLSession`; works on Apple platforms and on Linux (FoundationNetworking).
///
/// It never follows a redirect: a request may carry `Authorization`, a refresh token or a device proof, which must
/// not reach whatever host a `Location` names. A 3xx answer is returned as it is, and the SDK reports it as an error.
/// Bodies are streamed (``stream(_:)``) as they arrive; with a `URLSession` the app passes in, on Linux they arrive
/// whole (FoundationNetworking has no per-task delegates to stream them with).
///
/// A streamed body's request is cancelled when its reader goes away before the end (the stream and its iterators
/// released, or ``TransportStream/cancel`` called). At most ``bodyBufferLimit`` bytes wait for a reader; one that falls
/// further behind gets what was buffered, then `URLError(.dataLengthExceedsMaximum)`, and the request is cancelled
/// (pausing it instead is no choice: a `URLSession` data task resumed after `suspend()` starts over).
public struct URLSessionTransport: HTTPTransport, @unchecked Sendable {
    private let session: URLSession
    /// The transport's own session for streamed bodies (its delegate hands them over); `nil` with the app's session.
    private let streamingSession: URLSession?
    /// The most bytes of a streamed body that wait for their reader (default 4 MiB).
    public let bodyBufferLimit: Int
    static let redirects = RedirectRefusal()

    /// Uses `session`; by default an ephemeral session (no cookies, no cache) with a 30-second request timeout.
    /// `bodyBufferLimit` bounds what a streamed body buffers for a reader that falls behind.
    public init(session: URLSession? = nil, bodyBufferLimit: Int = 4 << 20) {
        self.bodyBufferLimit = max(1, bodyBufferLimit)
        if let session {
            self.session = session
            self.streamingSession = nil
        } else {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 30
            configuration.httpCookieStorage = nil
            configuration.urlCache = nil
            self.session = URLSession(configuration: configuration, delegate: Self.redirects, delegateQueue: nil)
            self.streamingSession = URLSession(configuration: configuration, delegate: StreamingDelegate.shared, delegateQueue: nil)
        }
    }

    /// Sends `request` with `URLSession.data(for:delegate:)`, refusing redirects.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let (data, response) = try await self.session.data(for: Self.urlRequest(request), delegate: Self.redirects)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return TransportResponse(status: http.statusCode, headers: Self.headers(of: http), body: data)
    }

    /// Sends `request` and returns once the response head arrived, with the body as it arrives; refuses redirects.
    public func stream(_ request: TransportRequest) async throws -> TransportStream {
        if let streamingSession {
            return try await StreamingDelegate.shared.start(
                streamingSession.dataTask(with: Self.urlRequest(request)), bufferLimit: self.bodyBufferLimit)
        }
        #if canImport(Darwin)
        let task = self.session.dataTask(with: Self.urlRequest(request))
        task.delegate = StreamingDelegate.shared
        return try await StreamingDelegate.shared.start(task, bufferLimit: self.bodyBufferLimit)
        #else
        return TransportStream(buffered: try await self.send(request))
        #endif
    }

    static func urlRequest(_ request: TransportRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        return urlRequest
    }

    static func headers(of response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return headers
    }
}

/// Answers every redirect with "do not follow", so the 3xx itself comes back.
final class RedirectRefusal: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

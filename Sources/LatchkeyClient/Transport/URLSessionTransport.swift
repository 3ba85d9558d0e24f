import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ``HTTPTransport`` over `URLSession`; works on Apple platforms and on Linux (FoundationNetworking).
///
/// It never follows a redirect: a request may carry `Authorization`, a refresh token or a device proof, which must
/// not reach whatever host a `Location` names. A 3xx answer is returned as it is, and the SDK reports it as an error.
public struct URLSessionTransport: HTTPTransport, @unchecked Sendable {
    private let session: URLSession
    private static let redirects = RedirectRefusal()

    /// Uses `session`; by default an ephemeral session (no cookies, no cache) with a 30-second request timeout.
    public init(session: URLSession? = nil) {
        if let session {
            self.session = session
        } else {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 30
            configuration.httpCookieStorage = nil
            configuration.urlCache = nil
            self.session = URLSession(configuration: configuration, delegate: Self.redirects, delegateQueue: nil)
        }
    }

    /// Sends `request` with `URLSession.data(for:delegate:)`, refusing redirects.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let (data, response) = try await self.session.data(for: urlRequest, delegate: Self.redirects)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return TransportResponse(status: http.statusCode, headers: headers, body: data)
    }
}

/// Answers every redirect with "do not follow", so the 3xx itself comes back.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

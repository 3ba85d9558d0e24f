import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Hands the body of each data task it was given (``start(_:bufferLimit:)``) over as it arrives, and refuses redirects.
final class StreamingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    static let shared = StreamingDelegate()

    /// A started task: who waits for its head, and where its body goes.
    private struct Started {
        var head: CheckedContinuation<HTTPURLResponse, any Error>?
        /// Held by the body's reader only: when the reader lets go, the channel goes, and the task is cancelled.
        weak var body: BodyChannel?
    }

    private let started = Locked<[ObjectIdentifier: Started]>([:])

    /// Resumes `task` and returns its response once the head arrived. At most `bufferLimit` bytes of the body wait for
    /// their reader (see ``BodyChannel``); the task is cancelled when the reader goes away before the end.
    func start(_ task: URLSessionDataTask, bufferLimit: Int) async throws -> TransportStream {
        let id = ObjectIdentifier(task)
        let body = BodyChannel(limit: bufferLimit) { task.cancel() }
        let head = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { head in
                self.started.withLock { $0[id] = Started(head: head, body: body) }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
        return TransportStream(
            status: head.statusCode, headers: URLSessionTransport.headers(of: head), body: body.stream, cancel: { [weak body] in body?.cancel() })
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let head = self.started.withLock { started -> CheckedContinuation<HTTPURLResponse, any Error>? in
            defer { started[ObjectIdentifier(dataTask)]?.head = nil }
            return started[ObjectIdentifier(dataTask)]?.head
        }
        guard let head else { return completionHandler(.allow) }
        guard let http = response as? HTTPURLResponse else {
            head.resume(throwing: URLError(.badServerResponse))
            return completionHandler(.cancel)
        }
        head.resume(returning: http)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let body = self.started.withLock { $0[ObjectIdentifier(dataTask)]?.body }
        guard let body, body.add(data) else { return dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = self.started.withLock({ $0.removeValue(forKey: ObjectIdentifier(task)) }) else { return }
        entry.head?.resume(throwing: error ?? URLError(.badServerResponse))
        entry.body?.finish(throwing: error)
    }
}

import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Hands the body of each data task it was given (``start(_:)``) over as it arrives, and refuses redirects.
final class StreamingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    static let shared = StreamingDelegate()

    /// A started task: who waits for its head, and where its body goes.
    private struct Started {
        var head: CheckedContinuation<TransportStream, any Error>?
        let body: AsyncThrowingStream<Data, any Error>
        let continuation: AsyncThrowingStream<Data, any Error>.Continuation
    }

    private let started = Locked<[ObjectIdentifier: Started]>([:])

    /// Resumes `task` and returns its response once the head arrived; ending the body's iteration early cancels it.
    func start(_ task: URLSessionDataTask) async throws -> TransportStream {
        let id = ObjectIdentifier(task)
        let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        continuation.onTermination = { _ in task.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { head in
                self.started.withLock { $0[id] = Started(head: head, body: body, continuation: continuation) }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
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
        let entry = self.started.withLock { started -> Started? in
            defer { started[ObjectIdentifier(dataTask)]?.head = nil }
            return started[ObjectIdentifier(dataTask)]
        }
        guard let entry, let head = entry.head else { return completionHandler(.allow) }
        guard let http = response as? HTTPURLResponse else {
            head.resume(throwing: URLError(.badServerResponse))
            return completionHandler(.cancel)
        }
        head.resume(returning: TransportStream(status: http.statusCode, headers: URLSessionTransport.headers(of: http), body: entry.body))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        self.started.withLock { $0[ObjectIdentifier(dataTask)]?.continuation }?.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = self.started.withLock({ $0.removeValue(forKey: ObjectIdentifier(task)) }) else { return }
        entry.head?.resume(throwing: error ?? URLError(.badServerResponse))
        entry.continuation.finish(throwing: error)
    }
}

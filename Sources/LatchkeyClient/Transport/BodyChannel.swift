import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A streamed body on its way from a data task (which ``add(_:)``s what arrives) to its reader (which takes it with
/// ``next()``), through a buffer of at most `limit` bytes.
///
/// A reader that falls further behind ends the body: it gets what was buffered, then
/// `URLError(.dataLengthExceedsMaximum)`, and the transfer stops. (Pausing the task instead is no choice: Apple documents
/// that a data task resumed after `suspend()` starts over, and FoundationNetworking's `suspend()` takes the transfer off
/// libcurl, which closes the connection, and `resume()` sends the request again and hands over its body from the start
/// after what had arrived — seen on Linux with Swift 6.3.) The transfer also stops when the reader is cancelled,
/// ``cancel()``s, or lets go of the channel.
final class BodyChannel: Sendable {
    private enum End {
        case finished
        case failed(any Error)
    }

    private struct State {
        var pieces: [Data] = []
        var buffered = 0
        var end: End?
        var reader: CheckedContinuation<Data?, any Error>?
    }

    /// The most bytes that wait for the reader.
    let limit: Int
    private let state = Locked(State())
    private let stopTransfer: @Sendable () -> Void

    /// A channel whose transfer `stopTransfer` stops (it may be called after the transfer ended, and more than once).
    init(limit: Int, stopTransfer: @escaping @Sendable () -> Void) {
        self.limit = limit
        self.stopTransfer = stopTransfer
    }

    deinit { self.stopTransfer() }

    /// Hands `data` to the reader or buffers it; `false` when the body has ended (the reader went away, or `data` would
    /// have taken the buffer past its limit): the caller stops the transfer.
    func add(_ data: Data) -> Bool {
        let (reader, accepted) = self.state.withLock { state -> (CheckedContinuation<Data?, any Error>?, Bool) in
            guard state.end == nil else { return (nil, false) }
            if let reader = state.reader {  // a waiting reader means an empty buffer
                state.reader = nil
                return (reader, true)
            }
            guard state.buffered + data.count <= self.limit else {
                state.end = .failed(URLError(.dataLengthExceedsMaximum))
                return (nil, false)
            }
            state.pieces.append(data)
            state.buffered += data.count
            return (nil, true)
        }
        reader?.resume(returning: data)
        return accepted
    }

    /// The transfer ended, with `error` or whole; the reader gets what is buffered first. Ignored once the body ended.
    func finish(throwing error: (any Error)?) {
        let reader = self.state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            guard state.end == nil else { return nil }
            state.end = error.map { .failed($0) } ?? .finished
            defer { state.reader = nil }
            return state.reader
        }
        if let error { reader?.resume(throwing: error) } else { reader?.resume(returning: nil) }
    }

    /// The next piece of the body, `nil` at its end; throws how the transfer failed. Cancelling the reading task ends the
    /// body and stops the transfer.
    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { reader in
                let ready = self.state.withLock { state -> Result<Data?, any Error>? in
                    if !state.pieces.isEmpty {
                        let piece = state.pieces.removeFirst()
                        state.buffered -= piece.count
                        return .success(piece)
                    }
                    switch state.end {
                    case .finished: return .success(nil)
                    case .failed(let error): return .failure(error)
                    case nil:
                        state.reader = reader
                        return nil
                    }
                }
                if let ready { reader.resume(with: ready) }
            }
        } onCancel: {
            self.cancel()
        }
    }

    /// The reader is done before the end: what is buffered is dropped, the body ends with `CancellationError`, and the
    /// transfer stops.
    func cancel() {
        let reader = self.state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            state.pieces = []
            state.buffered = 0
            if state.end == nil { state.end = .failed(CancellationError()) }
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(throwing: CancellationError())
        self.stopTransfer()
    }

    /// The body as a stream; the stream holds the channel, so the transfer stops when the stream and its iterators are gone.
    var stream: AsyncThrowingStream<Data, any Error> {
        AsyncThrowingStream(unfolding: { try await self.next() })
    }
}

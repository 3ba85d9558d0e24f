import Foundation

/// A response body as it arrives (``LatchkeySession/bytes(for:policy:)``): its bytes, its pieces (``chunks``) or its
/// lines (``lines``). Iterate it once.
///
/// The request is cancelled as soon as the body's reader goes away before its end: an iteration ended early (a `break`,
/// a `return`, a thrown error), the `ResponseBytes` released without being read, or the reading task cancelled (the
/// iteration then throws `CancellationError`). A reader that
/// stops reading does not make the body buffer without bound: past ``URLSessionTransport/bodyBufferLimit`` (4 MiB by
/// default) the request is cancelled, and the iteration ends with `URLError(.dataLengthExceedsMaximum)` after the bytes
/// that were buffered.
public struct ResponseBytes: AsyncSequence, Sendable {
    /// A byte.
    public typealias Element = UInt8
    private let body: ResponseBody

    /// Wraps a body that arrives in `chunks`.
    public init(chunks: AsyncThrowingStream<Data, any Error>) { self.body = ResponseBody(chunks: chunks, cancel: {}) }

    /// Wraps a transport's streamed body, which `stream.cancel` stops.
    init(_ stream: TransportStream) { self.body = ResponseBody(chunks: stream.body, cancel: stream.cancel) }

    /// The body in the pieces it arrives in.
    public var chunks: ResponseChunks { ResponseChunks(body: self.body) }

    /// The body's lines, split at `\n` (a `\r` before it is dropped) and yielded as each ends; empty lines are kept, as
    /// server-sent events need them. Bytes that are not UTF-8 are replaced.
    public var lines: ResponseLines { ResponseLines(body: self.body) }

    /// Creates the iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(reader: ChunkReader(self.body)) }

    /// Reads the bytes piece by piece.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: ChunkReader
        var buffer = Data()
        var index = 0

        /// The next byte, or `nil` at the end of the body.
        public mutating func next() async throws -> UInt8? {
            while self.index >= self.buffer.count {
                guard let chunk = try await self.reader.next() else { return nil }
                self.buffer = chunk
                self.index = 0
            }
            defer { self.index += 1 }
            return self.buffer[self.buffer.startIndex + self.index]
        }
    }
}

/// The pieces of a ``ResponseBytes`` body, as they arrive.
public struct ResponseChunks: AsyncSequence, Sendable {
    /// A piece of the body.
    public typealias Element = Data
    let body: ResponseBody

    /// Creates the iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(reader: ChunkReader(self.body)) }

    /// Reads the pieces.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: ChunkReader

        /// The next piece, or `nil` at the end of the body.
        public mutating func next() async throws -> Data? { try await self.reader.next() }
    }
}

/// The lines of a ``ResponseBytes`` body.
public struct ResponseLines: AsyncSequence, Sendable {
    /// A line, without its line break.
    public typealias Element = String
    let body: ResponseBody

    /// Creates the iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(reader: ChunkReader(self.body)) }

    /// Reads the lines as they end.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: ChunkReader
        var pending = Data()
        var finished = false

        /// The next line, or `nil` at the end of the body (a last line without a line break is returned first).
        public mutating func next() async throws -> String? {
            while true {
                if let newline = self.pending.firstIndex(of: 0x0A) {
                    var line = self.pending[self.pending.startIndex..<newline]
                    if line.last == 0x0D { line = line.dropLast() }
                    self.pending = Data(self.pending[(newline + 1)...])
                    return String(decoding: line, as: UTF8.self)
                }
                if self.finished {
                    guard !self.pending.isEmpty else { return nil }
                    defer { self.pending = Data() }
                    return String(decoding: self.pending, as: UTF8.self)
                }
                if let chunk = try await self.reader.next() { self.pending.append(chunk) } else { self.finished = true }
            }
        }
    }
}

/// A body and how to stop its transfer, shared by a ``ResponseBytes``, its copies and its iterators: when the last of
/// them goes, the transfer stops (nothing happens if it had ended).
final class ResponseBody: Sendable {
    let chunks: AsyncThrowingStream<Data, any Error>
    let cancel: @Sendable () -> Void

    init(chunks: AsyncThrowingStream<Data, any Error>, cancel: @escaping @Sendable () -> Void) {
        self.chunks = chunks
        self.cancel = cancel
    }

    deinit { self.cancel() }
}

/// One iteration of a body: when it is dropped before the body's end (a `break` out of its loop), the transfer stops,
/// even while the ``ResponseBytes`` itself is still around.
final class ChunkReader {
    private let body: ResponseBody
    private var iterator: AsyncThrowingStream<Data, any Error>.AsyncIterator
    private var ended = false

    init(_ body: ResponseBody) {
        self.body = body
        self.iterator = body.chunks.makeAsyncIterator()
    }

    /// The next piece, `nil` at the end. Throws `CancellationError` when the reading task was cancelled (where the stream
    /// itself would just end), so that a cut-off body never passes for a whole one.
    func next() async throws -> Data? {
        do {
            guard let chunk = try await self.iterator.next() else {
                self.ended = true
                if Task.isCancelled {
                    self.body.cancel()
                    throw CancellationError()
                }
                return nil
            }
            return chunk
        } catch {
            self.ended = true
            throw error
        }
    }

    deinit {
        if !self.ended { self.body.cancel() }
    }
}

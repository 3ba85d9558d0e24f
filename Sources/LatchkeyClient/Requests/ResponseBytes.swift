import Foundation

/// A response body as it arrives (``LatchkeySession/bytes(for:policy:)``): its bytes, its pieces (``chunks``) or its
/// lines (``lines``). Iterate it once; ending the iteration early cancels the request.
public struct ResponseBytes: AsyncSequence, Sendable {
    /// A byte.
    public typealias Element = UInt8
    /// The body in the pieces it arrives in.
    public let chunks: AsyncThrowingStream<Data, any Error>

    /// Wraps a body that arrives in `chunks`.
    public init(chunks: AsyncThrowingStream<Data, any Error>) { self.chunks = chunks }

    /// The body's lines, split at `\n` (a `\r` before it is dropped) and yielded as each ends; empty lines are kept, as
    /// server-sent events need them. Bytes that are not UTF-8 are replaced.
    public var lines: ResponseLines { ResponseLines(chunks: self.chunks) }

    /// Creates the iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: self.chunks.makeAsyncIterator()) }

    /// Reads the bytes piece by piece.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: AsyncThrowingStream<Data, any Error>.AsyncIterator
        var buffer = Data()
        var index = 0

        /// The next byte, or `nil` at the end of the body.
        public mutating func next() async throws -> UInt8? {
            while self.index >= self.buffer.count {
                guard let chunk = try await self.chunks.next() else { return nil }
                self.buffer = chunk
                self.index = 0
            }
            defer { self.index += 1 }
            return self.buffer[self.buffer.startIndex + self.index]
        }
    }
}

/// The lines of a ``ResponseBytes`` body.
public struct ResponseLines: AsyncSequence, Sendable {
    /// A line, without its line break.
    public typealias Element = String
    let chunks: AsyncThrowingStream<Data, any Error>

    /// Creates the iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: self.chunks.makeAsyncIterator()) }

    /// Reads the lines as they end.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: AsyncThrowingStream<Data, any Error>.AsyncIterator
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
                if let chunk = try await self.chunks.next() { self.pending.append(chunk) } else { self.finished = true }
            }
        }
    }
}

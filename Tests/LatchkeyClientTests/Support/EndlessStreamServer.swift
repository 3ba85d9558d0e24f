import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTP server on 127.0.0.1 (port 0) whose one route streams forever: every request is answered with a chunked
/// `text/event-stream` body of 1 KiB events that never ends. The test learns how each connection ended (``ending``): the
/// client closed it, or the server gave up after writing ``safetyCap`` bytes to a client that kept taking them (without
/// it a client that buffers without bound would eat this machine's memory).
///
/// Events go out at a live stream's pace, one every ``eventInterval``, not as fast as loopback takes them: a transfer
/// flooding FoundationNetworking keeps its work queue so busy that a `cancel()` from another thread waits for the
/// transfer's end (seen on Linux with Swift 6.3), which no real server's stream does.
final class EndlessStreamServer: @unchecked Sendable {
    /// How a connection ended.
    enum Ending: Equatable, Sendable {
        /// The client closed it (the server's next write failed).
        case clientClosed
        /// The client took ``safetyCap`` bytes without closing.
        case serverGaveUp
    }

    /// The most bytes written to one connection (16 MiB, about 4 seconds of events).
    static let safetyCap = 16 << 20
    /// The time between two events, in microseconds.
    static let eventInterval: useconds_t = 250
    /// One event, a line of about 1 KiB and the empty line that ends it.
    static let event = Data(("data: " + String(repeating: "x", count: 1016) + "\n\n").utf8)

    let url: URL
    private let listener: Int32
    private let lock = NSLock()
    private var endings: [Ending] = []
    private var waiters: [CheckedContinuation<Ending, Never>] = []

    init() throws {
        #if canImport(Glibc)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let listener = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard bound, listen(listener, 8) == 0 else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        self.listener = listener
        self.url = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))")!
        Thread { [self] in self.acceptConnections() }.start()
    }

    /// How the first connection not yet waited for ended, once it has.
    func ending() async -> Ending {
        await withCheckedContinuation { continuation in
            let ending = self.lock.withLock { () -> Ending? in
                if !self.endings.isEmpty { return self.endings.removeFirst() }
                self.waiters.append(continuation)
                return nil
            }
            if let ending { continuation.resume(returning: ending) }
        }
    }

    /// Stops accepting connections.
    func stop() {
        shutdown(self.listener, Int32(SHUT_RDWR))
        close(self.listener)
    }

    private func acceptConnections() {
        while true {
            let client = accept(self.listener, nil, nil)
            guard client >= 0 else { return }
            Thread { [self] in self.stream(to: client) }.start()
        }
    }

    private func stream(to client: Int32) {
        #if canImport(Darwin)
        var on: Int32 = 1
        setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        guard Self.readRequestHead(client) else {
            close(client)
            return
        }
        let head = Data("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        let chunk = Data(String(Self.event.count, radix: 16).utf8) + Data("\r\n".utf8) + Self.event + Data("\r\n".utf8)
        var written = 0
        var ending = Ending.serverGaveUp
        if Self.write(head, to: client) {
            while written < Self.safetyCap {
                guard Self.write(chunk, to: client) else {
                    ending = .clientClosed
                    break
                }
                written += chunk.count
                usleep(Self.eventInterval)
            }
        }
        close(client)
        self.record(ending)
    }

    private func record(_ ending: Ending) {
        let waiter = self.lock.withLock { () -> CheckedContinuation<Ending, Never>? in
            if self.waiters.isEmpty {
                self.endings.append(ending)
                return nil
            }
            return self.waiters.removeFirst()
        }
        waiter?.resume(returning: ending)
    }

    /// Reads up to the end of the request head; `false` when the client closed first.
    private static func readRequestHead(_ client: Int32) -> Bool {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end = Array("\r\n\r\n".utf8)
        while !received.contains(end) {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return false }
            received += buffer[0..<count]
        }
        return true
    }

    /// Writes all of `data`; `false` when the connection is gone.
    private static func write(_ data: Data, to client: Int32) -> Bool {
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        return data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let sent = send(client, bytes.baseAddress! + offset, bytes.count - offset, flags)
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }
    }
}

extension Array where Element: Equatable {
    fileprivate func contains(_ part: [Element]) -> Bool {
        guard self.count >= part.count else { return false }
        return (0...(self.count - part.count)).contains { Array(self[$0..<($0 + part.count)]) == part }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension RateLimiter {
    /// Runs `body` if `key` is within `policy`, with `X-RateLimit-Limit/Remaining/Reset` on the answer
    /// (success or error); over the limit, answers 429 `rate_limited` with `Retry-After` instead.
    func limiting(_ policy: RateLimitPolicy, key: String, _ body: () async throws -> Response) async throws -> Response {
        guard let decision = try await self.hit(policy, key: key) else { return try await body() }
        switch decision {
        case .denied(let resetAt):
            throw self.refusal(policy, resetAt: resetAt)
        case .allowed(let hitID, let remaining, let resetAt):
            let counted = Self.headers(policy: policy, remaining: remaining, resetAt: resetAt)
            // A meter takes back the hit of a request that did not succeed.
            func uncount() async throws -> HTTPFields {
                try await self.undo(policy, key: key, hitID: hitID)
                return Self.headers(policy: policy, remaining: remaining + 1, resetAt: resetAt)
            }
            do {
                var response = try await body()
                let succeeded = (200..<300).contains(response.status.code)
                response.headers.append(contentsOf: policy.countsOnlySuccesses && !succeeded ? try await uncount() : counted)
                return response
            } catch {
                let headers = policy.countsOnlySuccesses ? try await uncount() : counted
                guard var apiError = APIError.translating(error) else { throw error }
                apiError.extraHeaders.append(contentsOf: headers)
                throw apiError
            }
        }
    }

    /// Counts only the failures of `key`, for callers that share a key with strangers (a client IP behind a
    /// carrier NAT): a failure (an error or a non-2xx answer) stays counted, a success is given back.
    ///
    /// Each request takes one failure of the limit before it runs (``attempting(_:key:refusal:failed:_:)``: atomic, so of
    /// concurrent requests at most `policy.limit` run and fail; counting after the failure let every request in flight
    /// through). Over the limit, `worthTrying` decides: a request it vouches for (a refresh token this server issued)
    /// runs and gets its own answer, so the key's real users are not locked out by someone else's failures;
    /// any other gets 429 `rate_limited` with the policy's headers and `Retry-After`. The policy's headers
    /// appear on that 429 only: its count is of other callers' mistakes.
    func limitingFailures(
        _ policy: RateLimitPolicy, key: String, worthTrying: () async throws -> Bool, _ body: () async throws -> Response
    ) async throws -> Response {
        let outcome: Result<Response, any Error>
        do {
            outcome = try await self.attempting(
                policy, key: key, refusal: { OverFailureLimit(resetAt: $0) }, failed: { !Self.succeeded($0) }
            ) {
                // The request's own error is its answer, and a failure: it stays counted.
                do { return .success(try await body()) } catch { return .failure(error) }
            }
        } catch let over as OverFailureLimit {
            guard try await worthTrying() else { throw self.refusal(policy, resetAt: over.resetAt) }
            return try await body()
        }
        return try outcome.get()
    }

    private static func succeeded(_ outcome: Result<Response, any Error>) -> Bool {
        guard case .success(let response) = outcome else { return false }
        return (200..<300).contains(response.status.code)
    }

    /// 429 `rate_limited` with the policy's headers and `Retry-After`.
    func refusal(_ policy: RateLimitPolicy, resetAt: Date) -> RateLimitExceeded {
        RateLimitExceeded(policy: policy, resetAt: resetAt, now: self.now)
    }

    static func headers(policy: RateLimitPolicy, remaining: Int, resetAt: Date) -> HTTPFields {
        [
            HTTPField.Name(LatchkeyHeader.rateLimitLimit)!: String(policy.limit),
            HTTPField.Name(LatchkeyHeader.rateLimitRemaining)!: String(max(remaining, 0)),
            // Seconds since 1970, as GitHub sends it.
            HTTPField.Name(LatchkeyHeader.rateLimitReset)!: String(Int(resetAt.timeIntervalSince1970.rounded(.up))),
        ]
    }

    static func seconds(until date: Date, from now: Date) -> Int { max(1, Int(date.timeIntervalSince(now).rounded(.up))) }
}

extension LatchkeyRequestContext {
    /// The client's IP address: the socket's peer, or, when the peer is a trusted proxy, the nearest address in
    /// `X-Forwarded-For` that is not one of the trusted proxies.
    func clientIP(of request: Request, trustedProxies: Set<String>) -> String {
        let peer = self.remoteAddress?.ipAddress ?? "unknown"
        guard trustedProxies.contains(peer), let forwarded = request.headers[.init("X-Forwarded-For")!] else { return peer }
        let chain = forwarded.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return chain.last(where: { !trustedProxies.contains($0) }) ?? chain.first ?? peer
    }

    /// The client as per-client limits count it: its IPv4 address, or the /64 network of its IPv6 address (one
    /// subscriber gets a whole /64, so counting single IPv6 addresses would let it rotate past every limit).
    func limitKey(of request: Request, trustedProxies: Set<String>) -> String {
        ClientNetwork.key(of: self.clientIP(of: request, trustedProxies: trustedProxies))
    }
}

/// How per-client limits name a client address.
enum ClientNetwork {
    /// `address` itself for IPv4 (an IPv4-mapped IPv6 address counts as its IPv4 address), the `/64` it lies in for
    /// IPv6, and the text unchanged when it is not an IP address.
    static func key(of address: String) -> String {
        // inet_pton into 16 bytes, not `sockaddr_in6.sin6_addr`: that C struct is declared by two modules (the C
        // library's and NIO's CNIOLinux), and which one a clean build credits it to varies.
        var bytes = [UInt8](repeating: 0, count: 16)
        guard address.contains(":"), inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}

/// ``RateLimiter/limitingFailures(_:key:worthTrying:_:)``'s refusal before it asks whether the request is worth trying.
private struct OverFailureLimit: Error {
    let resetAt: Date
}

/// A request over `policy` until `resetAt`: 429 `rate_limited` with the policy's headers and `Retry-After`.
package struct RateLimitExceeded: APIErrorConvertible, Equatable {
    let policy: RateLimitPolicy
    let resetAt: Date
    let now: Date

    package var apiError: APIError {
        let seconds = RateLimiter.seconds(until: self.resetAt, from: self.now)
        var error = APIError(.tooManyRequests, .rateLimited, "Too many requests; try again in \(seconds) seconds.")
        error.extraHeaders = RateLimiter.headers(policy: self.policy, remaining: 0, resetAt: self.resetAt)
        error.extraHeaders[.retryAfter] = String(seconds)
        return error
    }
}

import Foundation
import LatchkeyAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The rate-limit headers of a response: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`, `Retry-After`.
public struct RateLimitInfo: Sendable, Equatable, CustomStringConvertible {
    /// How many calls the window allows.
    public var limit: Int?
    /// How many are left in the window.
    public var remaining: Int?
    /// When the window resets.
    public var reset: Date?
    /// How long to wait before trying again, in seconds (from `Retry-After`, present on 429).
    public var retryAfter: TimeInterval?

    /// Creates rate-limit information.
    public init(limit: Int? = nil, remaining: Int? = nil, reset: Date? = nil, retryAfter: TimeInterval? = nil) {
        self.limit = limit
        self.remaining = remaining
        self.reset = reset
        self.retryAfter = retryAfter
    }

    /// Reads the headers of `response`; `nil` when it carries none of them.
    ///
    /// `X-RateLimit-Reset` is read as seconds since 1970 when it is that large, else as seconds from `now`;
    /// `Retry-After` as seconds or as an HTTP date.
    public init?(response: TransportResponse, now: Date) {
        self.init(header: response.header, now: now)
    }

    /// Reads the headers of `response`, such as a 429 that ``LatchkeySession/data(for:policy:)`` handed back from the
    /// app's own API (``description`` then says how long to wait); `nil` when it carries none of them. The
    /// headers are read as for a `TransportResponse`.
    public init?(response: HTTPURLResponse, now: Date = Date()) {
        self.init(header: { response.value(forHTTPHeaderField: $0) }, now: now)
    }

    /// Reads the headers `header` looks up (case-insensitively); `nil` when there are none of them.
    init?(header: (String) -> String?, now: Date) {
        func integer(_ name: String) -> Int? { header(name).flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } }
        self.limit = integer(LatchkeyHeader.rateLimitLimit)
        self.remaining = integer(LatchkeyHeader.rateLimitRemaining)
        self.reset = integer(LatchkeyHeader.rateLimitReset).map { value in
            value > 1_000_000_000 ? Date(timeIntervalSince1970: TimeInterval(value)) : now.addingTimeInterval(TimeInterval(value))
        }
        self.retryAfter = header(LatchkeyHeader.retryAfter).flatMap { value in
            if let seconds = TimeInterval(value.trimmingCharacters(in: .whitespaces)) { return max(0, seconds) }
            return Self.httpDate(value).map { max(0, $0.timeIntervalSince(now)) }
        }
        if self.limit == nil, self.remaining == nil, self.reset == nil, self.retryAfter == nil { return nil }
    }

    /// How long to wait, in words: "Try again in 3 minutes." (from the SDK's string catalog, keys `rate_limit.*`).
    public var description: String {
        guard let seconds = self.retryAfter else { return ErrorMessages.text("rate_limit.later") }
        let minutes = Int((seconds / 60).rounded(.up))
        if seconds < 60 {
            let whole = Int(seconds.rounded(.up))
            return whole == 1 ? ErrorMessages.text("rate_limit.second") : ErrorMessages.text("rate_limit.seconds", whole)
        }
        if minutes < 120 { return minutes == 1 ? ErrorMessages.text("rate_limit.minute") : ErrorMessages.text("rate_limit.minutes", minutes) }
        return ErrorMessages.text("rate_limit.hours", Int((seconds / 3600).rounded(.up)))
    }

    private static func httpDate(_ value: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value)
    }
}

/// Header names shared by the server and its clients.
public enum LatchkeyHeader {
    /// The device UUID on guest and asset requests (no JWT on asset requests).
    public static let deviceID = "X-Device-ID"
    /// A request id echoed on every response, also written in the server's log line for that request.
    public static let requestID = "X-Request-ID"
    public static let rateLimitLimit = "X-RateLimit-Limit"
    public static let rateLimitRemaining = "X-RateLimit-Remaining"
    public static let rateLimitReset = "X-RateLimit-Reset"
    public static let retryAfter = "Retry-After"
}

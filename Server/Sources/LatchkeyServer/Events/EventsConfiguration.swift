import Configuration
import Foundation

/// The event sockets' settings. Keys (under `events.`): `max-sockets-per-user` (default 10: opening one more closes
/// the user's oldest with 4008), `max-sockets-per-client` (default 100 per client IP, IPv6 per /64: more are refused
/// with 429), `ping-interval` (seconds, default 30: a client that does not answer a ping within the next interval is
/// dropped). Upgrade attempts are also rate-limited per client IP (`limits.events`).
public struct EventsConfiguration: Sendable, Equatable {
    public var maxSocketsPerUser = 10
    public var maxSocketsPerClient = 100
    public var pingInterval: TimeInterval = 30
    /// How long before the token's `exp` `token.expiring` is sent.
    public var expiryWarning: TimeInterval = 60

    public init() {}

    init(reader: ConfigReader) {
        let defaults = Self()
        self.maxSocketsPerUser = reader.int(forKey: "max-sockets-per-user", default: defaults.maxSocketsPerUser)
        self.maxSocketsPerClient = reader.int(forKey: "max-sockets-per-client", default: defaults.maxSocketsPerClient)
        self.pingInterval = reader.double(forKey: "ping-interval", default: defaults.pingInterval)
    }

    /// What is wrong with the settings, if anything.
    var problems: [String] {
        var problems: [String] = []
        if self.maxSocketsPerUser < 1 { problems.append("events.max-sockets-per-user must be 1 or more") }
        if self.maxSocketsPerClient < 1 { problems.append("events.max-sockets-per-client must be 1 or more") }
        if !(self.pingInterval >= 1 && self.pingInterval <= 3600) { problems.append("events.ping-interval must be 1 to 3600 seconds") }
        return problems
    }
}

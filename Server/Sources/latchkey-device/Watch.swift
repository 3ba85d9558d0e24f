import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyClient

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the session's live events as they arrive (GET /api/v1/events over a WebSocket), one line each.",
        discussion: """
            Each line is the event's type and its fields (key=value), or with --json one JSON object ({"type": …}). Reconnects are \
            printed too. Exit 0 after session.revoked (the session is then signed out here), 3 when there is no session or it \
            ended here, 1 when the server closed the stream for too many connections (4008) or refused it, 5 when this \
            platform cannot open WebSockets or the state cannot be read.
            """)
    @OptionGroup var options: DeviceOptions

    func run() async throws {
        let session = self.options.makeSession()
        for await event in session.liveEvents() {
            let line = WatchLine(event)
            Output.line(self.options.json ? line.json : line.text)
            if let exitCode = line.exitCode { throw ExitCode(exitCode) }
        }
    }
}

/// One event as `watch` prints it: the wire's type names (`session.revoked`), snake_case fields, ISO 8601 dates.
struct WatchLine {
    var type: String
    var fields: [String: Any] = [:]
    /// For the stream's last event: how `watch` exits.
    var exitCode: Int32?

    init(_ event: LiveEvent) {
        switch event {
        case .connected: self.init(SessionEventType.connected, [:])
        case .reconnecting(let after): self.init("reconnecting", ["after": after])
        case .budgetChanged(let limit, let used, let remaining):
            self.init(SessionEventType.budgetChanged, ["limit": limit ?? NSNull(), "used": used, "remaining": remaining ?? NSNull()])
        case .identityLinked(let provider): self.init(SessionEventType.identityLinked, ["provider": provider])
        case .claimsChanged: self.init(SessionEventType.claimsChanged, [:])
        case .tokenExpiring(let expiresAt): self.init(SessionEventType.tokenExpiring, ["expires_at": Self.date(expiresAt)])
        case .reauthenticated(let expiresAt): self.init(SessionEventType.reauthenticated, ["expires_at": Self.date(expiresAt)])
        case .userDeleted: self.init(SessionEventType.userDeleted, [:])
        case .sessionRevoked(let reason):
            self.init(SessionEventType.sessionRevoked, ["reason": reason?.rawValue ?? "unknown"])
            self.exitCode = 0
        case .serverError(let code, let message): self.init(SessionEventType.error, ["error": code, "message": message])
        case .ended(let end): self.init(ended: end)
        }
    }

    private init(_ type: String, _ fields: [String: Any]) {
        self.type = type
        self.fields = fields
    }

    private init(ended end: LiveEventsEnd) {
        switch end {
        case .signedOut: self.init("ended", ["reason": "signed_out"])
        case .tooManyConnections: self.init("ended", ["reason": "too_many_connections"])
        case .refused(let status): self.init("ended", ["reason": "refused", "status": status])
        case .unsupported(let message): self.init("ended", ["reason": "unsupported", "message": message])
        case .storeUnavailable(let message): self.init("ended", ["reason": "store_unavailable", "message": message])
        }
        switch end {
        case .signedOut: self.exitCode = 3
        case .tooManyConnections, .refused: self.exitCode = 1
        case .unsupported, .storeUnavailable: self.exitCode = 5
        }
    }

    /// `{"type": …, fields…}` on one line, keys sorted.
    var json: String {
        var object = self.fields
        object["type"] = self.type
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// `type key=value …`, keys sorted.
    var text: String {
        let fields = self.fields.keys.sorted().map { key in "\(key)=\(self.fields[key] is NSNull ? "none" : "\(self.fields[key]!)")" }
        return ([self.type] + fields).joined(separator: " ")
    }

    private static func date(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
}

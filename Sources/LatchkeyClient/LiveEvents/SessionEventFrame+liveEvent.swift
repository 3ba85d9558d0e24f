import Foundation
import LatchkeyAPI

extension SessionEventFrame {
    /// The frame in a text message, or `nil` when the text is not one (such frames are skipped).
    init?(text: String) {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let frame = try? decoder.decode(SessionEventFrame.self, from: Data(text.utf8)) else { return nil }
        self = frame
    }

    /// The frame as the text of a message.
    var text: String? {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// What the app sees of this frame; `nil` for the ones the SDK handles alone (`token.expired`) and for types (or
    /// required fields) it does not know, so a newer server's frames do not break an older app.
    var liveEvent: LiveEvent? {
        switch self.type {
        case SessionEventType.connected: .connected
        case SessionEventType.budgetChanged: .budgetChanged(limit: self.limit, used: self.used ?? 0, remaining: self.remaining)
        case SessionEventType.identityLinked: self.provider.map { .identityLinked(provider: $0) }
        case SessionEventType.claimsChanged: .claimsChanged
        case SessionEventType.tokenExpiring: self.expiresAt.map { .tokenExpiring(expiresAt: $0) }
        case SessionEventType.reauthenticated: self.expiresAt.map { .reauthenticated(expiresAt: $0) }
        case SessionEventType.userDeleted: .userDeleted
        case SessionEventType.sessionRevoked: .sessionRevoked(self.reason.map(SessionRevocationReason.init(rawValue:)))
        case SessionEventType.error: .serverError(code: self.error ?? "unknown", message: self.message ?? "")
        default: nil
        }
    }
}

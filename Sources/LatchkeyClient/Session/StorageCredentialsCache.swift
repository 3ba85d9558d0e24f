import Foundation
import LatchkeyAPI

/// The storage credentials a session keeps for its user, and the one fetch of new ones in flight.
struct StorageCredentialsCache {
    /// Credentials fetched for `owner` (the user they were asked for), handed out until `renewAt`.
    struct Entry {
        let owner: String
        let credentials: StorageCredentials
        let renewAt: Date
    }

    /// The fetch in flight: every caller for the same owner in the same session generation awaits this one.
    struct Fetch {
        let owner: String
        let generation: Int
        let id: UUID
        let task: Task<StorageCredentials, any Error>
    }

    var entry: Entry?
    var fetch: Fetch?

    /// The kept credentials of `owner`, when `now` is still before their renewal time.
    func credentials(of owner: String, at now: Date) -> StorageCredentials? {
        guard let entry = self.entry, entry.owner == owner, now < entry.renewAt else { return nil }
        return entry.credentials
    }

    /// When credentials asked for at `askedAt` must be fetched anew: `margin` seconds before they expire, by their
    /// `expiration` or by `expires_in` counted on the session's clock, whichever comes first (a device clock running
    /// behind the server's cannot keep expired credentials in use).
    static func renewalTime(of credentials: StorageCredentials, askedAt: Date, margin: TimeInterval) -> Date {
        min(credentials.expiration, askedAt.addingTimeInterval(TimeInterval(credentials.expiresIn))).addingTimeInterval(-margin)
    }
}

import Crypto
import Synchronization

/// The last signing key a signer derived, for the day it was derived for.
///
/// A signing key depends on the secret, the date, the region and the service; a signer fixes all but the date, so
/// one entry saves the four HMACs of the derivation on every signature but the first of each day.
@available(LatchkeyServer 1.0, *)
final class SigningKeyCache: Sendable {
    private let entry = Mutex<(date: String, key: SymmetricKey)?>(nil)

    /// The key for `date`, derived with `derive` when the cached one is for another day.
    func key(for date: String, derive: (String) -> SymmetricKey) -> SymmetricKey {
        if let cached = self.entry.withLock({ $0 }), cached.date == date { return cached.key }
        let key = derive(date)
        self.entry.withLock { $0 = (date, key) }
        return key
    }
}

import Crypto
import Synchronization

/// What a signer derives once a day: the signing key, ready to authenticate, and the credential scope.
///
/// A signing key depends on the secret, the date, the region and the service; a signer fixes all but the date, so
/// one entry saves the four HMACs of the derivation on every signature but the first of each day. The entry's
/// `HMAC<SHA256>` has absorbed the key's pads: each signature copies it and hashes only its string to sign.
struct SigningDay: Sendable {
    /// `yyyyMMdd`.
    let date: String
    /// An authenticator keyed with the day's signing key.
    let authenticator: HMAC<SHA256>
    /// `<date>/<region>/<service>/aws4_request`.
    let scope: String
    /// `<access key ID>/<scope>`: `X-Amz-Credential` and the `Credential=` of an `Authorization` header.
    let credential: String
    /// ``credential`` AWS-encoded, as the query of a presigned URL carries it.
    let encodedCredential: String
    /// The session token of temporary credentials AWS-encoded, as the query of a presigned URL carries it.
    let encodedSessionToken: String?
}

/// The last ``SigningDay`` a signer derived.
final class SigningKeyCache: Sendable {
    private let entry = Mutex<SigningDay?>(nil)

    /// The day of `date`, derived with `derive` when the cached one is another day.
    func day(for date: String, derive: (String) -> SigningDay) -> SigningDay {
        if let cached = self.entry.withLock({ $0 }), cached.date == date { return cached }
        let day = derive(date)
        self.entry.withLock { $0 = day }
        return day
    }
}

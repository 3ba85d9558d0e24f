import Crypto
import Foundation
import JWTKit
import Logging
import Synchronization

/// The ES256 keys this server signs and verifies with, loaded from the database.
///
/// A rotated key is published in the JWKS at once and signs only from its `signs_from` time (`keys.publish-ahead`
/// later), so a verifier holding a cached JWKS never meets a `kid` it has not seen. Retired keys keep verifying, and
/// stay in the JWKS, for `keys.retention` after retirement. Every process on one database loads the same keys; each
/// reloads them every `keys.reload-interval` and when a token names a `kid` it does not know, and a key published ahead
/// takes over signing at its time without waiting for a reload.
package final class SigningKeyRing: Sendable {
    struct Snapshot: Sendable {
        let collection: JWTKeyCollection
        let activeKID: String
        /// A key published ahead and the time it starts signing.
        let next: (kid: String, from: Date)?
        let jwks: JSONWebKeySet
        /// The kids that verify: the published ones.
        let kids: Set<String>
    }

    private let store: any SigningKeyStore
    private let masterKey: MasterKey
    private let clock: any WallClock
    private let retention: TimeInterval
    /// How long a rotated key is published before it signs (`keys.publish-ahead`).
    let publishAhead: TimeInterval
    private let logger: Logger
    private let snapshot = Mutex<Snapshot?>(nil)
    private let lastOnDemandReload = Mutex<Date?>(nil)

    init(
        store: any SigningKeyStore, masterKey: MasterKey, clock: any WallClock, retention: TimeInterval, publishAhead: TimeInterval = 0,
        logger: Logger
    ) {
        self.store = store
        self.masterKey = masterKey
        self.clock = clock
        self.retention = retention
        self.publishAhead = publishAhead
        self.logger = logger
    }

    /// Creates the first key when the database has none (once, however many processes start together),
    /// then loads the keys.
    func prepare() async throws {
        if try await self.store.signingKeys().allSatisfy({ $0.retiredAt != nil }) {
            let record = try self.makeKey()
            if try await self.store.activateFirstSigningKey(record) {
                self.logger.info("signing key activated", metadata: ["kid": "\(record.kid)"])
            }
        }
        try await self.reload()
    }

    /// Adds a fresh key, published at once, that signs `publishAhead` seconds from now (default `keys.publish-ahead`;
    /// 0: at once, for a leaked key); earlier keys sign until then and keep verifying for `keys.retention` after.
    @discardableResult
    package func rotate(publishAhead: TimeInterval? = nil) async throws -> SigningKeyRecord {
        let publishAhead = publishAhead ?? self.publishAhead
        var record = try self.makeKey()
        if publishAhead > 0 { record.signsFrom = record.createdAt.addingTimeInterval(publishAhead) }
        try await self.store.activateSigningKey(record)
        self.logger.info("signing key published", metadata: ["kid": "\(record.kid)", "signs_from": "\(record.activeFrom.formatted(.iso8601))"])
        try await self.reload()
        return record
    }

    private func makeKey() throws -> SigningKeyRecord {
        let privateKey = P256.Signing.PrivateKey()
        let kid = privateKey.publicKey.jwkThumbprint
        return SigningKeyRecord(
            kid: kid, algorithm: "ES256", publicKeyPEM: privateKey.publicKey.pemRepresentation,
            sealedPrivateKey: try self.masterKey.seal(privateKey.rawRepresentation, context: Self.sealContext(kid: kid)),
            createdAt: self.clock.now(), retiredAt: nil)
    }

    /// What a signing key's sealed private key is bound to (its `kid`), so a sealed key cannot pass for another's.
    static func sealContext(kid: String) -> String { "signing-key \(kid)" }

    /// The keys recorded in the database, newest last.
    package func records() async throws -> [SigningKeyRecord] {
        try await self.store.signingKeys()
    }

    /// Loads the keys from the database (reading the master key file again first, when it changed).
    func reload() async throws {
        self.masterKey.followFile()
        let now = self.clock.now()
        let records = try await self.store.signingKeys().filter { record in
            record.revokedAt == nil && (record.retiredAt.map { now.timeIntervalSince($0) < self.retention } ?? true)
        }
        guard let active = records.last(where: { $0.signs(at: now) }) else {
            throw JWTError.generic(identifier: "keys", reason: "no active signing key in the database")
        }
        let next = records.first { record in record.signsFrom.map { $0 > now } == true && record.retiredAt == nil }
        let collection = JWTKeyCollection()
        var keys: [JSONWebKey] = []
        for record in records {
            let publicKey = try ES256PublicKey(pem: record.publicKeyPEM)
            if record.kid == active.kid || record.kid == next?.kid {
                guard let raw = try? self.masterKey.open(record.sealedPrivateKey, context: Self.sealContext(kid: record.kid)) else {
                    throw SigningKeyError.masterKeyMismatch(kid: record.kid)
                }
                let privateKey = try ES256PrivateKey(backing: try P256.Signing.PrivateKey(rawRepresentation: raw))
                await collection.add(ecdsa: privateKey, kid: JWKIdentifier(string: record.kid))
            } else {
                await collection.add(ecdsa: publicKey, kid: JWKIdentifier(string: record.kid))
            }
            if let parameters = publicKey.parameters {
                keys.append(JSONWebKey(kid: record.kid, x: parameters.x, y: parameters.y))
            }
        }
        // The signing key first, then the others newest first (keys made in one instant tie on created_at).
        let ordered = keys.filter { $0.kid == active.kid } + keys.filter { $0.kid != active.kid }.reversed()
        let fresh = Snapshot(
            collection: collection, activeKID: active.kid, next: next.map { ($0.kid, $0.activeFrom) }, jwks: JSONWebKeySet(keys: ordered),
            kids: Set(ordered.map(\.kid)))
        self.snapshot.withLock { $0 = fresh }
    }

    /// Revokes the key `kid` at once (a leaked key): it verifies nothing from now on, here and — through the
    /// revocation feed — in every other process, and leaves the JWKS. Revoking the signing key activates a fresh one
    /// first. False when there is no such key.
    package func revoke(kid: String) async throws -> Bool {
        let revoked = try await self.store.revokeSigningKey(kid: kid, replacement: try self.makeKey(), at: self.clock.now())
        if revoked {
            self.logger.warning("signing key revoked", metadata: ["kid": "\(kid)"])
            try await self.reload()
        }
        return revoked
    }

    /// Whether `kid` names a key that verifies tokens now.
    func knows(kid: String) -> Bool { self.snapshot.withLock { $0?.kids.contains(kid) ?? false } }

    /// Reloads for a token naming an unknown `kid`, at most once per `minimumInterval`, so a key
    /// rotated elsewhere is used at once while tokens with made-up `kid`s cannot hammer the database.
    func reloadForUnknownKID(minimumInterval: TimeInterval) async {
        let now = self.clock.now()
        let due = self.lastOnDemandReload.withLock { last in
            guard let last, now.timeIntervalSince(last) < minimumInterval else {
                last = now
                return true
            }
            return false
        }
        guard due else { return }
        do { try await self.reload() } catch { self.logger.error("reloading signing keys failed", metadata: ["error": "\(error)"]) }
    }

    var current: Snapshot {
        get throws {
            guard let snapshot = self.snapshot.withLock({ $0 }) else {
                throw JWTError.generic(identifier: "keys", reason: "signing keys not loaded")
            }
            return snapshot
        }
    }

    /// The public keys, as served at `/.well-known/jwks.json`.
    package var jwks: JSONWebKeySet {
        get throws { try self.current.jwks }
    }

    func sign(_ payload: some JWTPayload) async throws -> String {
        let snapshot = try self.current
        var kid = snapshot.activeKID
        if let next = snapshot.next, self.clock.now() >= next.from { kid = next.kid }
        // RFC 9068 explicit typing: these are access tokens, not any other JWT a key of ours might sign.
        return try await snapshot.collection.sign(payload, kid: JWKIdentifier(string: kid), header: ["typ": "at+jwt"])
    }

}

/// Why the signing keys could not be used.
///
/// A struct, not an enum, so reasons can be added without breaking callers.
public struct SigningKeyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The key ID of the signing key that could not be opened.
    public let kid: String

    private init(kid: String) { self.kid = kid }

    /// The master key given cannot decrypt the stored signing key `kid`.
    public static func masterKeyMismatch(kid: String) -> SigningKeyError { SigningKeyError(kid: kid) }

    public var description: String {
        "the master key cannot open signing key \(self.kid): use the master key this database was created with "
            + "(LATCHKEY_MASTER_KEY, or the key file beside the database)"
    }
}

/// One public key of the JWKS.
package struct JSONWebKey: Codable, Sendable, Equatable {
    package var kty = "EC"
    package var crv = "P-256"
    package var x: String
    package var y: String
    package var kid: String
    package var use = "sig"
    package var alg = "ES256"

    init(kid: String, x: String, y: String) {
        self.kid = kid
        self.x = x
        self.y = y
    }
}

/// `{"keys": [...]}`, the signing key first, then retired keys newest first.
package struct JSONWebKeySet: Codable, Sendable, Equatable {
    package var keys: [JSONWebKey]
}

import Foundation
import LatchkeyAPI

/// Storage access for users and devices: vended credentials (cached per user), presigned URLs for a user's folder, and
/// the asset listing and URLs devices fetch with their ID.
package final class StorageService: Sendable {
    let configuration: StorageConfiguration
    let client: ObjectStorageClient
    package let cache: StorageCredentialsCache
    let clock: any WallClock
    /// `storage.user-prefix` cut at each `{user_id}`, once: a user's folder is these parts joined with the user ID.
    private let userPrefixParts: [String]

    init(configuration: StorageConfiguration, client: ObjectStorageClient, cache: StorageCredentialsCache, clock: any WallClock) {
        self.configuration = configuration
        self.userPrefixParts = configuration.userPrefix.components(separatedBy: "{user_id}")
        self.client = client
        self.cache = cache
        self.clock = clock
    }

    /// Temporary credentials that reach only the user's folder: cached until 10 minutes before they expire, one STS
    /// call in flight per user.
    func credentials(forUser userID: String) async throws -> StorageCredentials {
        try self.requireEnabled()
        let prefix = self.prefix(ofUser: userID)
        let (client, clock) = (self.client, self.clock)
        let vended = try await self.cache.credentials(forUser: userID) {
            try await client.assumeRole(forUser: userID, prefix: prefix, at: clock.now())
        }
        return StorageCredentials(
            accessKeyID: vended.accessKeyID, secretAccessKey: vended.secretAccessKey, sessionToken: vended.sessionToken,
            expiration: vended.expiration, expiresIn: max(0, Int(vended.expiration.timeIntervalSince(self.clock.now()))),
            bucket: self.configuration.bucket ?? "", region: self.configuration.region, endpoint: self.configuration.resolvedEndpoint,
            prefix: prefix)
    }

    /// A presigned URL for `request.key` in the user's folder, valid `storage.presign-lifetime` seconds; a PUT's
    /// `Content-Type` (`application/octet-stream` when not named) is one of `storage.allowed-content-types`, signed.
    func presign(_ request: PresignRequest, forUser userID: String) throws -> PresignedURL {
        try self.requireEnabled()
        let key = try ObjectKey(request.key)
        guard request.method == .put else {
            guard request.contentType == nil else {
                throw ServiceError.invalidRequest("content_type is only for PUT: a download or delete sends no body.")
            }
            return try self.presigned(request.method, key: self.prefix(ofUser: userID) + key.relative, headers: [:])
        }
        // Always signed, so the upload cannot pick its own type (text/html would be served from the bucket's origin).
        let contentType = try UploadContentType(
            request.contentType ?? UploadContentType.unnamed, allowed: self.configuration.allowedContentTypes)
        return try self.presigned(.put, key: self.prefix(ofUser: userID) + key.relative, headers: contentType.signedHeaders)
    }

    /// One page of the assets under `prefix` (relative to `storage.assets-prefix`), keys relative to it too.
    func assets(prefix: String?, cursor: String?) async throws -> AssetList {
        let root = try self.requireAssets()
        let relative = try ObjectKey(prefix ?? "", field: "prefix", allowEmpty: true)
        if let cursor, cursor.isEmpty || cursor.utf8.count > 1024 || cursor.unicodeScalars.contains(where: { $0.value < 0x20 }) {
            throw ServiceError.invalidRequest("cursor must be the next_cursor of a previous page.")
        }
        let page = try await self.client.list(prefix: root + relative.relative, continuationToken: cursor, maxKeys: 1000, at: self.clock.now())
        let assets = page.contents.filter { $0.key.hasPrefix(root) }.map { object in
            Asset(key: String(object.key.dropFirst(root.count)), size: Int(object.size), lastModified: object.lastModified, etag: object.eTag)
        }
        return AssetList(assets: assets, nextCursor: page.isTruncated ? page.nextContinuationToken : nil)
    }

    /// A presigned GET URL for the asset `key` (relative to `storage.assets-prefix`).
    func assetURL(key: String) throws -> PresignedURL {
        let root = try self.requireAssets()
        return try self.presigned(.get, key: root + (try ObjectKey(key)).relative, headers: [:])
    }

    /// The user's folder: `storage.user-prefix` with `{user_id}` replaced.
    private func prefix(ofUser userID: String) -> String { self.userPrefixParts.joined(separator: userID) }

    private func presigned(_ method: PresignMethod, key: String, headers: [String: String]) throws -> PresignedURL {
        let now = self.clock.now()
        let lifetime = Int(self.configuration.presignLifetime)
        let url = try self.client.presign(method: method.rawValue, key: key, headers: headers, lifetime: lifetime, at: now)
        return PresignedURL(url: url, method: method, headers: headers, expiresAt: now.addingTimeInterval(TimeInterval(lifetime)))
    }

    private func requireEnabled() throws {
        guard self.configuration.isEnabled else {
            throw ServiceError.notFound(
                "Storage is not configured on this server: set storage.bucket, storage.role-arn, storage.access-key-id and "
                    + "storage.secret-access-key (LATCHKEY_STORAGE_*).")
        }
    }

    private func requireAssets() throws -> String {
        try self.requireEnabled()
        guard let root = self.configuration.assetsPrefix else {
            throw ServiceError.notFound("Assets are not configured on this server: set storage.assets-prefix (LATCHKEY_STORAGE_ASSETS_PREFIX).")
        }
        return root
    }

    /// Forgets a user's cached credentials when every session of theirs ends (a global logout, a password reset,
    /// support) or they are deleted, here or (deletions) in another process.
    func follow(_ changes: StoreChanges) {
        changes.subscribe { [cache = self.cache] change in
            switch change {
            case .userSignedOut(let userID), .userDeleted(let userID): cache.drop(userID: userID)
            default: break
            }
        }
    }
}

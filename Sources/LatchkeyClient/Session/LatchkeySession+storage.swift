import Foundation
import LatchkeyAPI

extension LatchkeySession {
    /// Temporary S3 credentials for the signed-in user's folder (`POST /api/v1/storage/credentials`), to hand to an S3
    /// SDK.
    ///
    /// They reach only `StorageCredentials/prefix` (`users/<user id>/`) of `StorageCredentials/bucket`, at
    /// `StorageCredentials/endpoint` (path-style) in `StorageCredentials/region`.
    ///
    /// The credentials are kept in memory (never in the secure store) and this returns them again without a request
    /// until ``Configuration/clockSkew`` (5 minutes by default) before they expire, by their `expiration` or by
    /// `expires_in` counted on the session's clock from when they were asked for, whichever comes first; the next call
    /// then fetches new ones. However many calls arrive while a fetch is in flight, one request is made and every one of
    /// them gets its answer. A failed fetch is not kept: the next call asks again.
    ///
    /// Signing out, the session ending, deleting the account, another sign-in and a new device identity forget them; a
    /// fetch still in flight then is discarded and its callers get ``LatchkeyError/notSignedIn``. With a
    /// ``Configuration/tokenProvider`` they are kept for the user the provider's current token names.
    ///
    /// - Throws: ``LatchkeyError/notSignedIn`` when no one is signed in (nothing is sent);
    ///   ``LatchkeyError/rejected(_:)`` `storage_not_configured` when the server offers no storage (404 `not_found`);
    ///   ``LatchkeyError/rejected(_:)`` with code `forbidden` (403) for a guest session; and the errors
    ///   of ``send(_:)``.
    /// - Returns: the credentials; their `description` and `dump` show bucket, prefix and expiration, never a secret.
    public func storageCredentials() async throws -> StorageCredentials {
        let owner = try await self.storageOwner()
        if let kept = self.storageCache.credentials(of: owner, at: self.clock.now()) { return kept }
        if let fetch = self.storageCache.fetch, fetch.owner == owner, fetch.generation == self.generation {
            return try await fetch.task.value
        }
        let generation = self.generation
        let id = UUID()
        let task = Task { try await self.fetchStorageCredentials(for: owner, generation: generation) }
        self.storageCache.fetch = StorageCredentialsCache.Fetch(owner: owner, generation: generation, id: id, task: task)
        defer { if self.storageCache.fetch?.id == id { self.storageCache.fetch = nil } }
        return try await task.value
    }

    /// A presigned URL for `key` in the signed-in user's folder (`POST /api/v1/storage/presign`), for apps that use no S3
    /// SDK: send `PresignedURL/method` to `PresignedURL/url` with `PresignedURL/headers` before
    /// `PresignedURL/expiresAt`; it needs no other credential.
    ///
    /// - Parameters:
    ///   - key: the object's key relative to the user's folder, e.g. `photos/2026/a.jpg`.
    ///   - method: what the URL does: `.get` downloads, `.put` uploads, `.delete` deletes.
    ///   - contentType: for `.put` only, the `Content-Type` the upload will send: one of the server's
    ///     `storage.allowed-content-types` (400 otherwise), `application/octet-stream` when nil. It is signed, so the
    ///     upload must send `PresignedURL/headers` as they are (with `Content-Disposition: attachment` for HTML or SVG).
    /// - Throws: ``LatchkeyError/rejected(_:)`` `invalid_key` when the server refuses the key (empty, over 1024 bytes, or one
    ///   that could leave the folder: `..`, a leading `/`, …); ``LatchkeyError/notSignedIn`` when no one is signed in
    ///   (nothing is sent); ``LatchkeyError/rejected(_:)`` `storage_not_configured`; 403 `forbidden` for a guest; the errors of ``send(_:)``.
    public func presignedURL(key: String, method: PresignMethod, contentType: String? = nil) async throws -> PresignedURL {
        let body = PresignRequest(method: method, key: key, contentType: contentType)
        return try await self.sendStorage(try .post("/api/v1/storage/presign", json: body, auth: .bearer), decoding: PresignedURL.self)
    }

    /// One page of the app's downloadable assets (`GET /api/v1/assets`), asked for with this install's device UUID only:
    /// the request carries `X-Device-ID` and never `Authorization`, so it works signed out too, once the device is
    /// registered.
    ///
    /// - Parameters:
    ///   - prefix: a folder below the server's assets folder (e.g. `kits/`); `nil` lists everything.
    ///   - cursor: the `AssetList/nextCursor` of the previous page; `nil` for the first page.
    /// - Throws: ``LatchkeyError/rejected(_:)`` `unknown_device` when the server does not know this device (register it with
    ///   ``registerDevice()`` or ``registerUser()`` first); ``LatchkeyError/rateLimited(_:)`` past the per-device limit;
    ///   ``LatchkeyError/rejected(_:)`` `invalid_key` for a prefix that could leave the assets folder;
    ///   ``LatchkeyError/rejected(_:)`` `storage_not_configured` when the server has no assets folder; the errors of ``send(_:)``.
    public func assets(prefix: String? = nil, cursor: String? = nil) async throws -> AssetList {
        let query = [("prefix", prefix), ("cursor", cursor)].compactMap { name, value in value.map { URLQueryItem(name: name, value: $0) } }
        let request = LatchkeyRequest(method: "GET", path: "/api/v1/assets", queryItems: query, auth: .deviceID)
        return try await self.sendStorage(request, decoding: AssetList.self)
    }

    /// A presigned download URL for the asset `key` (`GET /api/v1/assets/url`), asked for with this install's device UUID
    /// only (`X-Device-ID`, never `Authorization`); fetch it with a plain `GET` before `PresignedURL/expiresAt`.
    ///
    /// - Parameter key: the asset's key as ``assets(prefix:cursor:)`` lists it.
    /// - Throws: ``LatchkeyError/rejected(_:)`` `unknown_device`, ``LatchkeyError/rateLimited(_:)``, ``LatchkeyError/rejected(_:)`` `invalid_key`,
    ///   ``LatchkeyError/rejected(_:)`` `storage_not_configured` as ``assets(prefix:cursor:)`` does; the errors of ``send(_:)``.
    public func assetURL(key: String) async throws -> PresignedURL {
        let request = LatchkeyRequest(method: "GET", path: "/api/v1/assets/url", queryItems: [URLQueryItem(name: "key", value: key)], auth: .deviceID)
        return try await self.sendStorage(request, decoding: PresignedURL.self)
    }

    /// Whose storage credentials a call is for: the stored session's user, or the user the provider's token names (the
    /// token itself when it names none). Throws ``LatchkeyError/notSignedIn`` when no one is signed in.
    private func storageOwner() async throws -> String {
        if let provider = self.configuration.tokenProvider {
            guard let token = try await provider(false) else { throw LatchkeyError.notSignedIn }
            return UnverifiedJWT.subject(of: token) ?? token
        }
        guard let session = try self.loadCredentials().session else { throw LatchkeyError.notSignedIn }
        return session.userID
    }

    /// Asks the server for credentials and keeps them for `owner`, unless the session ended (or another began) meanwhile.
    private func fetchStorageCredentials(for owner: String, generation: Int) async throws -> StorageCredentials {
        let askedAt = self.clock.now()
        let request = LatchkeyRequest(method: "POST", path: "/api/v1/storage/credentials", auth: .bearer)
        let credentials = try await self.sendStorage(request, decoding: StorageCredentials.self)
        guard generation == self.generation else { throw LatchkeyError.notSignedIn }
        let renewAt = StorageCredentialsCache.renewalTime(of: credentials, askedAt: askedAt, margin: self.configuration.clockSkew)
        self.storageCache.entry = StorageCredentialsCache.Entry(owner: owner, credentials: credentials, renewAt: renewAt)
        return credentials
    }

    /// Sends a storage request; 404 `not_found` there means the server has no storage (or no assets folder) configured.
    private func sendStorage<Response: Decodable>(_ request: LatchkeyRequest, decoding type: Response.Type) async throws -> Response {
        do {
            return try await self.send(request, decoding: type)
        } catch let error as LatchkeyError where error.isNotFound {
            throw LatchkeyError.rejected(.storageNotConfigured, status: 404)
        }
    }
}

import Foundation

/// `POST /api/v1/storage/credentials`: temporary S3 credentials (STS `AssumeRole`) that reach only
/// `prefix` (`users/<user id>/`) of `bucket`, for `expires_in` seconds.
public struct StorageCredentials: Codable, Sendable, Equatable {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String
    /// When the credentials stop working.
    public var expiration: Date
    /// Seconds from the answer until `expiration`.
    public var expiresIn: Int
    public var bucket: String
    public var region: String
    /// The S3 endpoint to send requests to (AWS's regional endpoint or an S3-compatible store).
    public var endpoint: String
    /// The only key prefix the credentials reach, e.g. `users/5f0c…/`.
    public var prefix: String

    enum CodingKeys: String, CodingKey {
        case accessKeyID = "access_key_id"
        case secretAccessKey = "secret_access_key"
        case sessionToken = "session_token"
        case expiration
        case expiresIn = "expires_in"
        case bucket, region, endpoint, prefix
    }

    public init(
        accessKeyID: String, secretAccessKey: String, sessionToken: String, expiration: Date, expiresIn: Int, bucket: String,
        region: String, endpoint: String, prefix: String
    ) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
        self.expiresIn = expiresIn
        self.bucket = bucket
        self.region = region
        self.endpoint = endpoint
        self.prefix = prefix
    }
}

/// The HTTP methods a presigned URL can be made for.
public enum PresignMethod: String, Codable, Sendable, CaseIterable {
    case get = "GET"
    case put = "PUT"
    case delete = "DELETE"
}

/// `POST /api/v1/storage/presign`: a presigned URL for `key`, relative to the user's prefix.
public struct PresignRequest: Codable, Sendable, Equatable {
    public var method: PresignMethod
    /// The object key below the user's prefix, e.g. `photos/2026/a.jpg`: no `..` segments, no leading `/`,
    /// no backslashes or control characters, 1…1024 bytes.
    public var key: String
    /// For a PUT: the `Content-Type` the upload must send (it is signed); one of the server's
    /// `storage.allowed-content-types`, `application/octet-stream` when nil.
    public var contentType: String?

    enum CodingKeys: String, CodingKey {
        case method, key
        case contentType = "content_type"
    }

    public init(method: PresignMethod, key: String, contentType: String? = nil) {
        self.method = method
        self.key = key
        self.contentType = contentType
    }
}

/// A presigned URL: send `method` to `url` with `headers` before `expires_at`; no other credential is needed.
public struct PresignedURL: Codable, Sendable, Equatable {
    public var url: String
    public var method: PresignMethod
    /// Headers that were signed and must be sent as they are (e.g. `Content-Type` for a PUT); often empty.
    public var headers: [String: String]
    public var expiresAt: Date

    enum CodingKeys: String, CodingKey {
        case url, method, headers
        case expiresAt = "expires_at"
    }

    public init(url: String, method: PresignMethod, headers: [String: String], expiresAt: Date) {
        self.url = url
        self.method = method
        self.headers = headers
        self.expiresAt = expiresAt
    }
}

/// One object of `GET /api/v1/assets`.
public struct Asset: Codable, Sendable, Equatable {
    /// The key relative to the assets prefix, as `GET /api/v1/assets/url?key=` takes it.
    public var key: String
    public var size: Int
    public var lastModified: Date?
    public var etag: String?

    enum CodingKeys: String, CodingKey {
        case key, size, etag
        case lastModified = "last_modified"
    }

    public init(key: String, size: Int, lastModified: Date?, etag: String?) {
        self.key = key
        self.size = size
        self.lastModified = lastModified
        self.etag = etag
    }
}

/// `GET /api/v1/assets`: one page of assets; pass `next_cursor` as `cursor` for the next page (absent on the last).
public struct AssetList: Codable, Sendable, Equatable {
    public var assets: [Asset]
    public var nextCursor: String?

    enum CodingKeys: String, CodingKey {
        case assets
        case nextCursor = "next_cursor"
    }

    public init(assets: [Asset], nextCursor: String?) {
        self.assets = assets
        self.nextCursor = nextCursor
    }
}

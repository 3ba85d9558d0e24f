import Configuration
import Foundation

/// Storage access (`storage.*`, env `LATCHKEY_STORAGE_*`): temporary S3 credentials scoped to each user's folder,
/// presigned URLs, and device-ID asset downloads. Off (the storage routes answer 404) until `bucket` is set.
///
/// - `bucket`, `region` (default `us-east-1`)
/// - `endpoint`: the S3 endpoint (default AWS's regional one, `https://s3.<region>.amazonaws.com`); an S3-compatible
///   store's URL (SeaweedFS, MinIO, Ceph RGW) is addressed path-style
/// - `sts-endpoint`: where `AssumeRole` goes (default `https://sts.<region>.amazonaws.com`)
/// - `access-key-id`, `secret-access-key` (a secret: never logged, never in an error): the key that calls STS and
///   signs presigned URLs and asset listings
/// - `role-arn`: the role the vended credentials assume
/// - `duration` (seconds, default 3600, allowed 900–43200): how long vended credentials last
/// - `user-prefix` (default `users/{user_id}/`): the only folder a user's credentials and URLs reach
/// - `actions` (comma-separated; default get/put/delete object and the multipart actions): what the credentials allow there
/// - `assets-prefix` (e.g. `assets/`): the folder `GET /api/v1/assets` lists; without it the asset routes answer 404
/// - `presign-lifetime` (seconds, default 300, at most 604800)
/// - `allowed-content-types` (comma-separated `type/subtype` or `type/*`; default images, audio, video,
///   `application/octet-stream`, `application/json`, `application/zip`): what a presigned PUT may be signed with
/// - `timeout` (seconds, default 10): how long an STS or S3 call may take before the answer is 502
public struct StorageConfiguration: Sendable, Equatable {
    public static let defaultActions = [
        "s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts",
    ]

    public var bucket: String?
    public var region = "us-east-1"
    public var endpoint: String?
    public var stsEndpoint: String?
    public var accessKeyID: String?
    public var secretAccessKey: String?
    public var roleARN: String?
    public var duration: TimeInterval = 3600
    public var userPrefix = "users/{user_id}/"
    public var actions = Self.defaultActions
    public var assetsPrefix: String?
    public var presignLifetime: TimeInterval = 300
    public var allowedContentTypes = UploadContentType.defaultAllowed
    public var timeout: TimeInterval = 10

    public init() {}

    init(reader: ConfigReader) {
        let defaults = Self()
        self.bucket = reader.string(forKey: "bucket").flatMap { $0.isEmpty ? nil : $0 }
        self.region = reader.string(forKey: "region", default: defaults.region)
        self.endpoint = reader.string(forKey: "endpoint")
        self.stsEndpoint = reader.string(forKey: "sts-endpoint")
        self.accessKeyID = reader.string(forKey: "access-key-id")
        self.secretAccessKey = reader.string(forKey: "secret-access-key", isSecret: true)
        self.roleARN = reader.string(forKey: "role-arn")
        self.duration = reader.double(forKey: "duration", default: defaults.duration)
        self.userPrefix = reader.string(forKey: "user-prefix", default: defaults.userPrefix)
        self.actions = reader.stringArray(forKey: "actions", default: defaults.actions)
        self.assetsPrefix = reader.string(forKey: "assets-prefix").flatMap { $0.isEmpty ? nil : $0 }
        self.presignLifetime = reader.double(forKey: "presign-lifetime", default: defaults.presignLifetime)
        self.allowedContentTypes = reader.stringArray(forKey: "allowed-content-types", default: defaults.allowedContentTypes)
        self.timeout = reader.double(forKey: "timeout", default: defaults.timeout)
    }

    /// Whether storage is on: a bucket is configured.
    public var isEnabled: Bool { self.bucket != nil }

    /// The S3 endpoint, without a trailing slash.
    public var resolvedEndpoint: String { Self.trimmed(self.endpoint ?? "https://s3.\(self.region).amazonaws.com") }
    /// The STS endpoint, without a trailing slash.
    public var resolvedSTSEndpoint: String { Self.trimmed(self.stsEndpoint ?? "https://sts.\(self.region).amazonaws.com") }

    /// The user's folder: `user-prefix` with `{user_id}` replaced.
    func prefix(ofUser userID: String) -> String { self.userPrefix.replacingOccurrences(of: "{user_id}", with: userID) }

    /// What is wrong with the settings, for a refusal at start; empty when storage is off or all is well.
    var problems: [String] {
        guard self.isEnabled else { return [] }
        var problems: [String] = []
        if self.accessKeyID?.isEmpty ?? true || self.secretAccessKey?.isEmpty ?? true {
            problems.append("storage.access-key-id and storage.secret-access-key are required with storage.bucket")
        }
        if self.roleARN?.isEmpty ?? true { problems.append("storage.role-arn is required with storage.bucket") }
        if !(900...43_200).contains(self.duration) { problems.append("storage.duration must be 900 to 43200 seconds") }
        if !(1...604_800).contains(self.presignLifetime) { problems.append("storage.presign-lifetime must be 1 to 604800 seconds") }
        if !(self.timeout > 0) { problems.append("storage.timeout must be a number of seconds above 0") }
        if self.allowedContentTypes.isEmpty || !self.allowedContentTypes.allSatisfy(UploadContentType.isValidPattern) {
            problems.append("storage.allowed-content-types must list MIME types (type/subtype or type/*)")
        }
        if !self.userPrefix.contains("{user_id}") || !self.userPrefix.hasSuffix("/") || self.userPrefix.hasPrefix("/") {
            problems.append("storage.user-prefix must contain {user_id}, end with / and not start with /")
        }
        if let assets = self.assetsPrefix, !assets.hasSuffix("/") || assets.hasPrefix("/") {
            problems.append("storage.assets-prefix must end with / and not start with /")
        }
        if self.actions.isEmpty || self.actions.contains(where: { !$0.hasPrefix("s3:") }) {
            problems.append("storage.actions must list S3 actions (s3:GetObject, …)")
        }
        // STS takes a session policy of at most 2048 characters; a long bucket name or many actions could pass it.
        let policy = SessionPolicy(bucket: self.bucket ?? "", prefix: self.prefix(ofUser: UUID().uuidString.lowercased()), actions: self.actions)
        if policy.json.count > 2048 {
            problems.append("storage.bucket, storage.user-prefix and storage.actions make a session policy over STS's 2048 characters")
        }
        for (key, url) in [("storage.endpoint", self.resolvedEndpoint), ("storage.sts-endpoint", self.resolvedSTSEndpoint)] {
            guard let components = URLComponents(string: url), ["http", "https"].contains(components.scheme ?? ""), components.host != nil
            else {
                problems.append("\(key) must be an http(s) URL")
                continue
            }
        }
        return problems
    }

    private static func trimmed(_ url: String) -> String {
        var url = url
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }
}

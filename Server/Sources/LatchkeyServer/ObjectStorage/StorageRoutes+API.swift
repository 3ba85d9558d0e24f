import HTTPTypes
import LatchkeyAPI

extension StorageRoutes {
    static let notConfigured = APIOperation.Outcome.notFound("Storage (or, for assets, `storage.assets-prefix`) is not configured on this server.")
    static let upstream = APIOperation.Outcome.badGateway(
        "STS or S3 refused (the message names its error code) or did not answer within `storage.timeout` (`upstream_error`).")

    static let credentials = APIOperation(
        .post, "/api/v1/storage/credentials", id: "getStorageCredentials", tag: "Storage", summary: "Temporary storage credentials",
        description:
            "Temporary S3 credentials (STS `AssumeRole` with the configured `storage.role-arn`) that reach only `prefix` "
            + "(`users/<user id>/`) of `bucket`: the configured `storage.actions` on `<prefix>*` and `s3:ListBucket` with `s3:prefix` "
            + "under it, nothing else, for `storage.duration` seconds (default 3600). Use them with any S3 SDK (path-style, the given "
            + "`endpoint` and `region`). The server keeps a user's credentials until 10 minutes before they expire and asks STS once "
            + "however many requests arrive; a global logout or deleting the account forgets them. Guests get 403.",
        security: .bearer,
        outcomes: [
            .init(200, "Credentials for the user's folder.", body: StorageCredentials.self, headers: ["Cache-Control"]), notConfigured,
            upstream, .unavailable,
        ])

    static let presign = APIOperation(
        .post, "/api/v1/storage/presign", id: "presignStorageURL", tag: "Storage", summary: "A presigned URL in the user's folder",
        description:
            "A SigV4 query-presigned URL for `users/<user id>/<key>`, valid `storage.presign-lifetime` seconds (default 300): send "
            + "`method` to `url` with `headers`, no other credential. A PUT is always signed with its `Content-Type`: "
            + "`content_type`, or `application/octet-stream` without it, one of `storage.allowed-content-types` (default images, "
            + "audio, video, `application/octet-stream`, `application/json`, `application/zip`; others are 400 `invalid_request`); "
            + "HTML, XHTML, SVG and other XML, when allowed at all, are also signed with `Content-Disposition: attachment`, so they "
            + "are never served inline from the bucket's origin. `key` is relative to the user's folder; one that would leave it "
            + "(`..` or `.` segments, a leading `/`, `//`, backslashes, percent-encoded dots or slashes, control characters), is "
            + "empty or is over 1024 bytes is 400 `invalid_key` and nothing is signed. Guests get 403.",
        security: .bearer, requestBody: PresignRequest.self,
        requestExample: #"{"method": "PUT", "key": "photos/2026/a.jpg", "content_type": "image/jpeg"}"#,
        outcomes: [
            .init(200, "The presigned URL.", body: PresignedURL.self, headers: ["Cache-Control"]),
            .badRequest(
                "The body is not valid, `content_type` is not one of `storage.allowed-content-types`, or `key` would leave the user's "
                    + "folder (`invalid_key`)."), .tooLarge, notConfigured,
            .unavailable,
        ])

    static let assets = APIOperation(
        .get, "/api/v1/assets", id: "listAssets", tag: "Storage", summary: "List assets (device ID only)",
        description:
            "The objects under `storage.assets-prefix` (and `prefix` below it), 1000 per page, keys relative to the assets prefix; "
            + "pass `next_cursor` as `cursor` for the next page. Takes `X-Device-ID` of a device registered before (`users/register` "
            + "or `auth/register-device`); `Authorization` is neither needed nor read.",
        parameters: [
            .init("prefix", in: .query, required: false, "A folder below the assets prefix, e.g. `kits/`."),
            .init("cursor", in: .query, required: false, "The `next_cursor` of the previous page."),
        ],
        outcomes: [.init(200, "One page of assets.", body: AssetList.self), notConfigured, upstream, .unavailable])

    static let assetURL = APIOperation(
        .get, "/api/v1/assets/url", id: "getAssetURL", tag: "Storage", summary: "A download URL for an asset (device ID only)",
        description:
            "A presigned GET URL for the asset `key` (relative to `storage.assets-prefix`), valid `storage.presign-lifetime` "
            + "seconds. A key outside the assets prefix is 400 `invalid_key`. Takes `X-Device-ID` of a registered device only.",
        parameters: [.init("key", in: .query, required: true, "The asset's key, as the listing gives it.")],
        outcomes: [.init(200, "The download URL.", body: PresignedURL.self, headers: ["Cache-Control"]), notConfigured, .unavailable])
}

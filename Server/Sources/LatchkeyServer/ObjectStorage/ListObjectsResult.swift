import Foundation

/// One page of S3's `ListObjectsV2` (`GET /bucket?list-type=2`): the `ListBucketResult` document.
///
/// With `encoding-type=url` the server form-encodes keys and prefixes; they are decoded here (as botocore does, a `+`
/// is a space), so ``Object/key`` is always the real key.
package struct ListObjectsResult: Sendable, Hashable {
    /// One object of the listing (`Contents`).
    package struct Object: Sendable, Hashable {
        /// The object's key.
        package let key: String
        /// Its size in bytes.
        package let size: Int64
        /// When it was last written.
        package let lastModified: Date
        /// Its entity tag without the quotes S3 wraps it in; `nil` when the server sent none.
        package let eTag: String?
        /// `STANDARD`, `GLACIER`…, when the server says.
        package let storageClass: String?

        package init(key: String, size: Int64, lastModified: Date, eTag: String?, storageClass: String?) {
            self.key = key
            self.size = size
            self.lastModified = lastModified
            self.eTag = eTag
            self.storageClass = storageClass
        }
    }

    /// The bucket (`Name`).
    package let bucket: String?
    /// The prefix the listing was limited to (`Prefix`), `nil` when absent.
    package let prefix: String?
    /// The delimiter that grouped keys into ``commonPrefixes``.
    package let delimiter: String?
    /// How many keys and common prefixes this page holds (`KeyCount`), when the server says.
    package let keyCount: Int?
    /// The page size asked for (`MaxKeys`).
    package let maxKeys: Int?
    /// Whether more pages follow (`IsTruncated`).
    package let isTruncated: Bool
    /// The token this page was asked with (`ContinuationToken`).
    package let continuationToken: String?
    /// The token that asks for the next page (`NextContinuationToken`); always there when ``isTruncated``.
    package let nextContinuationToken: String?
    /// The objects (`Contents`), in key order.
    package let contents: [Object]
    /// The groups of keys under the delimiter (`CommonPrefixes/Prefix`).
    package let commonPrefixes: [String]

    /// Reads a `ListBucketResult`; throws the ``AWSErrorResponse`` when `data` is an error document, and
    /// ``ObjectStorageResponseError`` when it is malformed or lacks what a page must have.
    package static func parse(_ data: Data) throws -> ListObjectsResult {
        let root = try ObjectStorageXMLElement.parse(data)
        if let error = try AWSErrorResponse(root: root) { throw error }
        guard root.name == "ListBucketResult" else {
            throw ObjectStorageResponseError(.unexpectedDocument, "expected a ListBucketResult, found <\(root.name)>")
        }
        let urlEncoded = root.text("EncodingType")?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == "url"
        func decoded(_ text: String?, at path: String) throws -> String? {
            guard let text, urlEncoded else { return text }
            guard let decoded = text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
                throw ObjectStorageResponseError(.invalidValue, "the response's \(path) is not URL-encoded text")
            }
            return decoded
        }
        let isTruncated = try root.required("IsTruncated", root.boolean)
        let nextToken = root.text("NextContinuationToken")
        if isTruncated, nextToken?.isEmpty ?? true {
            throw ObjectStorageResponseError(.missingElement, "the response is truncated but has no ListBucketResult/NextContinuationToken")
        }
        return ListObjectsResult(
            bucket: root.text("Name"), prefix: try decoded(root.text("Prefix"), at: "ListBucketResult/Prefix"),
            delimiter: try decoded(root.text("Delimiter"), at: "ListBucketResult/Delimiter"),
            keyCount: try root.integer("KeyCount").map(Int.init), maxKeys: try root.integer("MaxKeys").map(Int.init), isTruncated: isTruncated,
            continuationToken: root.text("ContinuationToken"), nextContinuationToken: nextToken,
            contents: try root.children(named: "Contents").map { entry in
                Object(
                    key: try decoded(try entry.requiredText("Key"), at: "\(entry.path)/Key") ?? "", size: try entry.required("Size", entry.integer),
                    lastModified: try entry.required("LastModified", entry.date), eTag: entry.text("ETag").map(Self.unquoted),
                    storageClass: entry.text("StorageClass"))
            },
            commonPrefixes: try root.children(named: "CommonPrefixes").compactMap { group in
                try decoded(try group.requiredText("Prefix"), at: "\(group.path)/Prefix")
            })
    }

    /// `"9b2cf535f27731c974343645a3985328"` → `9b2cf535f27731c974343645a3985328`.
    private static func unquoted(_ eTag: String) -> String {
        eTag.trimmingCharacters(in: .whitespacesAndNewlines).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }
}

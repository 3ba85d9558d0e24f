import Foundation

/// A request's URL as a signature sees it: the path and query re-encoded the AWS way, and the `host` header.
///
/// The URL is read as the caller wrote it (percent-escapes decoded byte by byte, a `+` is a plus sign) and every
/// path segment, query name and query value is encoded again with ``AWSURIEncoding``, so `/a b/é` and `/a%20b/%C3%A9`
/// sign (and are sent) alike. A `%2F` inside a segment stays an escaped slash.
package struct SigV4RequestTarget: Sendable {
    /// One query parameter, name and value AWS-encoded.
    package struct Parameter: Sendable, Hashable {
        package var name: String
        package var value: String

        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }

        /// A name and value not yet encoded.
        package static func encoding(name: String, value: String) -> Parameter {
            Parameter(name: AWSURIEncoding.encode(name), value: AWSURIEncoding.encode(value))
        }
    }

    /// `scheme://host[:port]`: the URL without user, password, path, query and fragment.
    package let origin: String
    /// The path as it is sent: every segment AWS-encoded once, `/` kept.
    package private(set) var encodedPath: String
    /// The query parameters in the URL's order.
    package var parameters: [Parameter]
    /// The `host` header: the lowercase host, with the port unless it is the scheme's default.
    package let host: String

    /// Reads `url`; throws when it has no host.
    package init(url: URLComponents) throws {
        guard let rawHost = url.percentEncodedHost, !rawHost.isEmpty else {
            throw SigV4Error(code: .invalidURL, message: "the URL to sign has no host")
        }
        var host = rawHost.lowercased()
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        if let port = url.port, port != Self.defaultPort(scheme: url.scheme) { host += ":\(port)" }
        self.host = host

        let path = url.percentEncodedPath
        self.encodedPath =
            path.isEmpty
            ? "/" : path.split(separator: "/", omittingEmptySubsequences: false).map { AWSURIEncoding.reencode($0) }.joined(separator: "/")
        self.parameters = (url.percentEncodedQuery ?? "").split(separator: "&").map { pair in
            // The first `=` splits name from value; a pair without one has an empty value.
            let separator = pair.utf8.firstIndex(of: UInt8(ascii: "="))
            let name = separator.map { pair[..<$0] } ?? pair
            let value = separator.map { pair[pair.utf8.index(after: $0)...] } ?? ""
            return Parameter(name: AWSURIEncoding.reencode(name), value: AWSURIEncoding.reencode(value))
        }
        var base = url
        base.user = nil
        base.password = nil
        base.fragment = nil
        base.percentEncodedPath = ""
        base.percentEncodedQuery = nil
        guard let origin = base.string else { throw SigV4Error(code: .invalidURL, message: "the URL to sign could not be read") }
        self.origin = origin
    }

    /// This target with `path` (not percent-encoded: every byte is taken as it is) appended below its path, each
    /// `/`-separated segment AWS-encoded: an object's URL from its bucket's, without reading a URL again.
    package func appendingPath(_ path: String) -> SigV4RequestTarget {
        var target = self
        let base = self.encodedPath.hasSuffix("/") ? self.encodedPath.dropLast() : Substring(self.encodedPath)
        target.encodedPath = base + "/" + AWSURIEncoding.encodePath(path)
        return target
    }

    /// The canonical URI: the path as sent (S3), or, for every other service, normalised as botocore does (no `.`,
    /// `..` or empty segments) and encoded a second time.
    package func canonicalURI(doubleEncodingPath: Bool) -> String {
        guard doubleEncodingPath else { return self.encodedPath }
        return Self.removingDotSegments(self.encodedPath).split(separator: "/", omittingEmptySubsequences: false)
            .map { AWSURIEncoding.encode($0) }.joined(separator: "/")
    }

    /// The canonical query string: parameters sorted by name, then value (bytewise), repeated names kept, `name=`
    /// for an empty value.
    package var canonicalQuery: String {
        var text = UTF8Text(capacity: 256)
        self.writeCanonicalQuery(to: &text)
        return text.string
    }

    /// Appends ``canonicalQuery`` to `text`.
    func writeCanonicalQuery(to text: inout UTF8Text) {
        // Already in order (a presigned object URL: the signer's own parameters, which it adds sorted)?
        let inOrder = zip(self.parameters, self.parameters.dropFirst()).allSatisfy { left, right in
            left.name.utf8.lexicographicallyPrecedes(right.name.utf8)
        }
        let sorted =
            inOrder
            ? self.parameters
            : self.parameters.sorted { left, right in
                left.name == right.name
                    ? left.value.utf8.lexicographicallyPrecedes(right.value.utf8) : left.name.utf8.lexicographicallyPrecedes(right.name.utf8)
            }
        for (index, parameter) in sorted.enumerated() {
            if index > 0 { text.append(byte: UInt8(ascii: "&")) }
            text.append(parameter.name)
            text.append(byte: UInt8(ascii: "="))
            text.append(parameter.value)
        }
    }

    /// The URL to send as text: the origin, the encoded path, and `query` (already encoded) unless it is empty.
    package func urlString(query: String) -> String {
        query.isEmpty ? self.origin + self.encodedPath : self.origin + self.encodedPath + "?" + query
    }

    /// The URL to send: the encoded path, and `query` (already encoded) unless it is empty.
    package func url(query: String) throws -> URL {
        guard let url = URL(string: self.urlString(query: query)) else {
            throw SigV4Error(code: .invalidURL, message: "the signed URL could not be formed")
        }
        return url
    }

    private static func defaultPort(scheme: String?) -> Int? {
        switch scheme?.lowercased() {
        case "http": 80
        case "https": 443
        default: nil
        }
    }

    /// RFC 3986's dot-segment removal as botocore (`remove_dot_segments`) does it, dropping empty segments too.
    private static func removingDotSegments(_ path: String) -> String {
        var segments: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) where segment != "." {
            if segment == ".." {
                _ = segments.popLast()
            } else {
                segments.append(segment)
            }
        }
        let leading = path.hasPrefix("/") ? "/" : ""
        let trailing = path.hasSuffix("/") && !segments.isEmpty ? "/" : ""
        return leading + segments.joined(separator: "/") + trailing
    }
}

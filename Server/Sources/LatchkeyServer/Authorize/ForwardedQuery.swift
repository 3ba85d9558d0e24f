import Foundation

/// The query of a request a proxy asks about, read for a rule that takes its token from the URI (`token=query`).
///
/// Names and values are percent-decoded (`+` stays a `+`: a token never holds a space); a malformed escape or bytes
/// that are not UTF-8 make the query unreadable, so no two readers can disagree on which parameter is which.
enum ForwardedQuery {
    /// Every value of the parameter `name` in `uri` (a path with an optional query), in order; nil when the query
    /// cannot be read.
    static func values(of name: String, in uri: String) -> [String]? {
        guard let start = uri.firstIndex(of: "?") else { return [] }
        let query = uri[uri.index(after: start)...].prefix { $0 != "#" }
        var values: [String] = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = parts[0].removingPercentEncoding else { return nil }
            guard key == name else { continue }
            guard let value = parts.count == 2 ? parts[1].removingPercentEncoding : "" else { return nil }
            values.append(value)
        }
        return values
    }
}

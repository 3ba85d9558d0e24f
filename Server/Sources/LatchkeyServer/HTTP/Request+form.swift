import Foundation
import Hummingbird

extension Request {
    /// The fields of an `application/x-www-form-urlencoded` body of at most `limit` bytes, as a browser posts a form (the
    /// last value of a repeated name wins; a field that is not valid percent-encoding is left out).
    func formFields(upTo limit: Int) async throws -> [String: String] {
        var request = self
        let buffer = try await request.collectBody(upTo: limit)
        var fields: [String: String] = [:]
        for pair in String(buffer: buffer).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String? { String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else { continue }
            fields[name] = value
        }
        return fields
    }
}

import HTTPTypes
import Hummingbird

/// What an API handler returns: a value encoded by the context's encoder, with a status and extra headers.
struct Answer<Value: Encodable & Sendable>: ResponseGenerator {
    let value: Value
    var status: HTTPResponse.Status = .ok
    var headers: HTTPFields = [:]

    init(_ value: Value, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) {
        self.value = value
        self.status = status
        self.headers = headers
    }

    /// An answer carrying tokens: never stored by a cache on the way (RFC 6749 §5.1).
    static func tokens(_ value: Value, status: HTTPResponse.Status = .ok) -> Answer {
        Answer(value, status: status, headers: TokenAnswerHeaders.noStore)
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try context.responseEncoder.encode(self.value, from: request, context: context)
        response.status = self.status
        response.headers.append(contentsOf: self.headers)
        return response
    }
}

/// The headers of every answer carrying tokens, built once.
enum TokenAnswerHeaders {
    static let noStore: HTTPFields = [.cacheControl: "no-store", HTTPField.Name("Pragma")!: "no-cache"]
}

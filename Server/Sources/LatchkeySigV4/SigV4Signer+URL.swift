import Foundation

/// The signer's methods for a `URL` rather than `URLComponents`.
extension SigV4Signer {
    /// ``sign(method:url:headers:payload:date:)`` for a `URL`.
    public func sign(method: String, url: URL, headers: [String: String] = [:], payload: SigV4Payload, date: Date) throws -> SigV4SignedRequest {
        try self.sign(method: method, url: Self.components(of: url), headers: headers, payload: payload, date: date)
    }

    /// ``signFormPost(url:parameters:date:)`` for a `URL`.
    public func signFormPost(url: URL, parameters: [URLQueryItem], date: Date) throws -> SigV4SignedRequest {
        try self.signFormPost(url: Self.components(of: url), parameters: parameters, date: date)
    }

    /// ``presign(method:url:headers:expiresAfter:payload:date:)`` for a `URL`.
    public func presign(
        method: String, url: URL, headers: [String: String] = [:], expiresAfter seconds: Int, payload: SigV4Payload? = nil, date: Date
    ) throws -> URL {
        try self.presign(method: method, url: Self.components(of: url), headers: headers, expiresAfter: seconds, payload: payload, date: date)
    }

    private static func components(of url: URL) throws -> URLComponents {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            throw SigV4Error(code: .invalidURL, message: "the URL to sign could not be read")
        }
        return components
    }
}

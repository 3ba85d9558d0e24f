import HTTPTypes
import Hummingbird

@available(LatchkeyServer 1.0, *)
extension Request {
    static let dpopHeader = HTTPField.Name("DPoP")!

    /// The `DPoP` header's proof, nil when there is none; 400 when the header comes more than once.
    var dpopProof: String? {
        get throws {
            let values = self.headers[values: Self.dpopHeader]
            guard values.count <= 1 else { throw DPoPRejection.duplicated }
            return values.first.flatMap { $0.isEmpty ? nil : $0 }
        }
    }
}

@available(LatchkeyServer 1.0, *)
extension DPoPVerifier {
    /// The request's proof, verified for its method and path; nil when it carries none.
    func proof(of request: Request) throws -> VerifiedProof? {
        guard let proof = try request.dpopProof else { return nil }
        return try self.verify(proof, method: request.method.rawValue, path: request.uri.path, host: request.head.authority)
    }
}

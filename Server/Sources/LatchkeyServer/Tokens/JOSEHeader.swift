import Foundation
import JWTKit

/// The header of a compact JWS, read with jwt-kit before anything is verified (to pick the algorithm and key).
struct JOSEHeader: Sendable, Equatable {
    var alg: String?
    var kid: String?
    var typ: String?

    /// The header of `token`; ``TokenRejection/malformed`` when it is not a compact JWS with a JSON header.
    init(of token: String) throws {
        guard let parts = try? DefaultJWTParser().getTokenParts(Array(token.utf8)),
            let data = Data(base64URLEncoded: String(decoding: parts.header, as: UTF8.self)),
            let header = try? JSONDecoder().decode(JWTHeader.self, from: data)
        else { throw TokenRejection.malformed }
        self.alg = header.alg
        self.kid = header.kid
        self.typ = header.typ
    }
}

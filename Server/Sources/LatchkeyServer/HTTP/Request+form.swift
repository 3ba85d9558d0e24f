import Foundation
import Hummingbird

extension Request {
    /// An `application/x-www-form-urlencoded` body of at most `limit` bytes (else 413), as a browser posts a form,
    /// decoded as `Form` by Hummingbird's `URLEncodedFormDecoder`; `nil` when it is not a well-formed form of that shape
    /// (a repeated field, bad percent-encoding). The decoder's error is dropped, not logged or answered: it quotes what
    /// was sent, which may be a password.
    func form<Form: Decodable>(_ type: Form.Type, upTo limit: Int) async throws -> Form? {
        var request = self
        let buffer = try await request.collectBody(upTo: limit)
        return try? URLEncodedFormDecoder().decode(Form.self, from: String(buffer: buffer))
    }
}

import Crypto
import Foundation

extension P256.Signing.PublicKey {
    /// The RFC 7638 thumbprint of this key as a JWK (base64url SHA-256 of its canonical JSON): stable, and says
    /// nothing secret. Signing keys use it as `kid`; DPoP uses it as `jkt`.
    var jwkThumbprint: String {
        let (x, y) = self.jwkCoordinates
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"#
        return Data(SHA256.hash(data: Data(canonical.utf8))).base64URLEncodedString()
    }

    /// The base64url `x` and `y` of the key's JWK form.
    var jwkCoordinates: (x: String, y: String) {
        let x963 = self.x963Representation
        return (Data(x963[1..<33]).base64URLEncodedString(), Data(x963[33..<65]).base64URLEncodedString())
    }
}

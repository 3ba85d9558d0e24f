import Crypto
import Foundation

/// The computation under every signature: canonical headers, canonical request, string to sign, signing key.
extension SigV4Signer {
    /// Headers botocore never signs: hop-by-hop ones, and those a proxy may change on the way.
    static let unsignedHeaderNames: Set<String> = [
        "connection", "expect", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade",
        "user-agent", "x-amzn-trace-id",
    ]
    /// Headers the signer sets itself; a caller's own values for them are dropped.
    static let signerHeaderNames: Set<String> = ["authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"]

    /// The canonical header lines and the signed header names of `headers` plus `host` (unless a `host` is given).
    ///
    /// Names are lowercased; values trimmed, inner runs of whitespace made one space; the values of names that differ
    /// only in case are joined with `,` in the order of the original names.
    func canonicalHeaders(_ headers: [String: String], host: String) -> (lines: String, names: String) {
        if headers.isEmpty { return ("host:" + host, "host") }  // a presigned download: the host alone
        var values: [String: [String]] = [:]
        for (name, value) in headers.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            let name = name.lowercased()
            guard !Self.unsignedHeaderNames.contains(name) else { continue }
            values[name, default: []].append(Self.collapsingWhitespace(value))
        }
        if values["host"] == nil { values["host"] = [host] }
        let names = values.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let lines = names.map { "\($0):\(values[$0, default: []].joined(separator: ","))" }
        return (lines.joined(separator: "\n"), names.joined(separator: ";"))
    }

    /// Signs a canonical request made of these parts.
    func signature(
        method: String, target: SigV4RequestTarget, query: String, headers: (lines: String, names: String), payloadHash: String,
        timestamp: SigV4Timestamp
    ) -> SigV4Signature {
        let canonicalURI = target.canonicalURI(doubleEncodingPath: self.doubleEncodesPath)
        var canonicalRequest = ""
        canonicalRequest.reserveCapacity(canonicalURI.utf8.count + query.utf8.count + headers.lines.utf8.count + 160)
        for part in [method.uppercased(), canonicalURI, query, headers.lines + "\n", headers.names] {
            canonicalRequest += part
            canonicalRequest += "\n"
        }
        canonicalRequest += payloadHash
        let day = self.day(of: timestamp)
        var hash = SHA256()
        hash.update(utf8: canonicalRequest)
        let stringToSign = "AWS4-HMAC-SHA256\n\(timestamp.dateTime)\n\(day.scope)\n\(hash.finalize().hexEncoded)"
        var authenticator = day.authenticator
        authenticator.update(utf8: stringToSign)
        return SigV4Signature(
            canonicalRequest: canonicalRequest, stringToSign: stringToSign, credential: day.credential, signedHeaders: headers.names,
            signature: authenticator.finalize().hexEncoded)
    }

    /// The signing key and scope of `timestamp`'s day, derived once a day.
    func day(of timestamp: SigV4Timestamp) -> SigningDay {
        self.keyCache.day(for: timestamp.date) { date in
            let scope = "\(date)/\(self.region)/\(self.service)/aws4_request"
            let credential = "\(self.credentials.accessKeyID)/\(scope)"
            return SigningDay(
                date: date, authenticator: HMAC<SHA256>(key: self.signingKey(date: date)), scope: scope, credential: credential,
                encodedCredential: AWSURIEncoding.encode(credential),
                encodedSessionToken: self.credentials.sessionToken.map { AWSURIEncoding.encode($0) })
        }
    }

    /// `kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")`.
    private func signingKey(date: String) -> SymmetricKey {
        var key = SymmetricKey(data: Data("AWS4\(self.credentials.secretAccessKey)".utf8))
        for part in [date, self.region, self.service, "aws4_request"] {
            key = SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key))
        }
        return key
    }

    /// `value` without leading or trailing whitespace and with each inner run of it made one space, as botocore's
    /// `' '.join(value.split())` does (Python's whitespace: Unicode's, plus the separators U+001C…U+001F).
    static func collapsingWhitespace(_ value: String) -> String {
        var words: [String] = []
        var word = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            if scalar.properties.isWhitespace || (0x1C...0x1F).contains(scalar.value) {
                if !word.isEmpty { words.append(String(word)) }
                word = String.UnicodeScalarView()
            } else {
                word.append(scalar)
            }
        }
        if !word.isEmpty { words.append(String(word)) }
        return words.joined(separator: " ")
    }
}

extension HashFunction {
    /// Hashes `text`'s UTF-8 bytes in place (no `Data` copy for a native string).
    mutating func update(utf8 text: String) {
        var text = text
        text.withUTF8 { self.update(bufferPointer: UnsafeRawBufferPointer($0)) }
    }
}

extension HMAC {
    /// Authenticates `text`'s UTF-8 bytes in place.
    mutating func update(utf8 text: String) {
        var text = text
        text.withUTF8 { self.update(data: UnsafeRawBufferPointer($0)) }
    }
}

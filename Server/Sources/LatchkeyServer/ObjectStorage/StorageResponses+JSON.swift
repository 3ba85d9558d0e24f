import LatchkeyAPI

/// The storage bodies on the routes measured against token verification read and write their plain JSON themselves.
extension PresignedURL: JSONBodyWritable {
    package func writeMembers(to writer: inout JSONBodyWriter) {
        writer.member("expires_at", self.expiresAt)
        writer.member("headers", self.headers)
        writer.member("method", self.method.rawValue)
        writer.member("url", self.url)
    }
}

extension StorageCredentials: JSONBodyWritable {
    package func writeMembers(to writer: inout JSONBodyWriter) {
        writer.member("access_key_id", self.accessKeyID)
        writer.member("bucket", self.bucket)
        writer.member("endpoint", self.endpoint)
        writer.member("expiration", self.expiration)
        writer.member("expires_in", self.expiresIn)
        writer.member("prefix", self.prefix)
        writer.member("region", self.region)
        writer.member("secret_access_key", self.secretAccessKey)
        writer.member("session_token", self.sessionToken)
    }
}

extension PresignRequest: PlainJSONDecodable {
    package init?(plainMembers: [(name: String, value: String)]) {
        var (method, key, contentType): (PresignMethod?, String?, String?) = (nil, nil, nil)
        for (name, value) in plainMembers {
            switch name {
            case "method" where method == nil: method = PresignMethod(rawValue: value)
            case "key" where key == nil: key = value
            case "content_type" where contentType == nil: contentType = value
            default: return nil  // repeated or unknown: JSONDecoder decides
            }
            if name == "method" && method == nil { return nil }
        }
        guard let method, let key else { return nil }
        self.init(method: method, key: key, contentType: contentType)
    }
}

import Foundation

/// The versioned JSON form of ``StoredCredentials``, shared by the file and Keychain stores.
///
/// Version 1: `{"format": 1, "device_id", "device_secret"?, "device_key"?: {"kind": "p256" | "secure-enclave", "data"
/// (base64)}, "session"?: {"kind", "user_id", "session_id"?, "access_token", "access_token_expires_at" (seconds since
/// 1970), "refresh_token"?}, "device_id_restored"?: true, "app_attest_key_id"?, "app_attest_key_attested"?: true}`.
/// Readers ignore fields they do not know and accept any `format`, so a newer SDK reads what an older one wrote
/// (and the other way round) without logging anyone out; a session it cannot read is dropped, the device kept.
public enum CredentialsFormat {
    /// The version this SDK writes.
    public static let currentVersion = 1

    /// Encodes `credentials` in the current version.
    public static func encode(_ credentials: StoredCredentials) throws -> Data {
        let document = Document(
            format: Self.currentVersion, deviceID: credentials.deviceID.uuidString.lowercased(), deviceSecret: credentials.deviceSecret,
            deviceKey: credentials.deviceKey.map { KeyDocument(kind: $0.kind.rawValue, data: $0.data.base64EncodedString()) },
            session: credentials.session.map(SessionDocument.init), deviceIDRestored: credentials.deviceIDRestored ? true : nil,
            appAttestKeyID: credentials.appAttestKeyID, appAttestKeyAttested: credentials.appAttestKeyAttested ? true : nil)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(document)
    }

    /// Decodes credentials written by any version; throws ``SecureStoreError/corrupt`` when no device ID can be read.
    public static func decode(_ data: Data) throws -> StoredCredentials {
        guard let document = try? JSONDecoder().decode(Document.self, from: data), let deviceID = UUID(uuidString: document.deviceID) else {
            throw SecureStoreError.corrupt
        }
        return StoredCredentials(
            deviceID: deviceID, deviceSecret: document.deviceSecret, deviceKey: document.deviceKey?.key, session: document.session?.session,
            deviceIDRestored: document.deviceIDRestored ?? false, appAttestKeyID: document.appAttestKeyID,
            appAttestKeyAttested: document.appAttestKeyAttested ?? false)
    }

    private struct Document: Codable {
        var format: Int
        var deviceID: String
        var deviceSecret: String?
        var deviceKey: KeyDocument?
        var session: SessionDocument?
        var deviceIDRestored: Bool?
        var appAttestKeyID: String?
        var appAttestKeyAttested: Bool?

        enum CodingKeys: String, CodingKey {
            case format
            case deviceID = "device_id"
            case deviceSecret = "device_secret"
            case deviceKey = "device_key"
            case session
            case deviceIDRestored = "device_id_restored"
            case appAttestKeyID = "app_attest_key_id"
            case appAttestKeyAttested = "app_attest_key_attested"
        }

        init(
            format: Int, deviceID: String, deviceSecret: String?, deviceKey: KeyDocument?, session: SessionDocument?, deviceIDRestored: Bool?,
            appAttestKeyID: String?, appAttestKeyAttested: Bool?
        ) {
            self.format = format
            self.deviceID = deviceID
            self.deviceSecret = deviceSecret
            self.deviceKey = deviceKey
            self.session = session
            self.deviceIDRestored = deviceIDRestored
            self.appAttestKeyID = appAttestKeyID
            self.appAttestKeyAttested = appAttestKeyAttested
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.format = (try? container.decode(Int.self, forKey: .format)) ?? 1
            self.deviceID = try container.decode(String.self, forKey: .deviceID)
            self.deviceSecret = try? container.decodeIfPresent(String.self, forKey: .deviceSecret)
            self.deviceKey = try? container.decodeIfPresent(KeyDocument.self, forKey: .deviceKey)
            // A session this version cannot read (a kind it does not know) is dropped; the device identity survives.
            self.session = try? container.decodeIfPresent(SessionDocument.self, forKey: .session)
            self.deviceIDRestored = try? container.decodeIfPresent(Bool.self, forKey: .deviceIDRestored)
            self.appAttestKeyID = try? container.decodeIfPresent(String.self, forKey: .appAttestKeyID)
            self.appAttestKeyAttested = try? container.decodeIfPresent(Bool.self, forKey: .appAttestKeyAttested)
        }
    }

    private struct KeyDocument: Codable {
        var kind: String
        var data: String

        /// The key, when this SDK knows its kind.
        var key: DeviceKey? {
            guard let kind = DeviceKey.Kind(rawValue: self.kind), let data = Data(base64Encoded: self.data) else { return nil }
            return DeviceKey(kind: kind, data: data)
        }
    }

    private struct SessionDocument: Codable {
        var kind: SessionKind
        var userID: String
        var sessionID: String?
        var accessToken: String
        var accessTokenExpiresAt: Double
        var refreshToken: String?

        enum CodingKeys: String, CodingKey {
            case kind
            case userID = "user_id"
            case sessionID = "session_id"
            case accessToken = "access_token"
            case accessTokenExpiresAt = "access_token_expires_at"
            case refreshToken = "refresh_token"
        }

        init(_ session: StoredSession) {
            self.kind = session.kind
            self.userID = session.userID
            self.sessionID = session.sessionID
            self.accessToken = session.accessToken
            self.accessTokenExpiresAt = session.accessTokenExpiresAt.timeIntervalSince1970
            self.refreshToken = session.refreshToken
        }

        var session: StoredSession {
            StoredSession(
                kind: self.kind, userID: self.userID, sessionID: self.sessionID, accessToken: self.accessToken,
                accessTokenExpiresAt: Date(timeIntervalSince1970: self.accessTokenExpiresAt), refreshToken: self.refreshToken)
        }
    }
}

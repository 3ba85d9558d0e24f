import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyTestSupport
import SQLKit
import Testing

/// Issue 31, "Where you're signed in", from the issue's text: `GET /api/v1/users/me/sessions` and
/// `DELETE /api/v1/users/me/sessions/{id}`.
@Suite struct Spec31SessionsTests {
    static let path = "/api/v1/users/me/sessions"

    static func sessions(
        _ client: some TestClientProtocol, _ token: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws
        -> [[String: Any]]
    {
        let answer = try await client.send(.get, Self.path, bearer: token, sourceLocation: sourceLocation)
        #expect(answer.status == .ok, "\(answer.text)", sourceLocation: sourceLocation)
        #expect(answer.headers[.contentType]?.hasPrefix("application/json") == true, sourceLocation: sourceLocation)
        let object = try Spec31.object(answer)
        #expect(Set(object.keys) == ["sessions"], "\(object.keys)", sourceLocation: sourceLocation)
        return try #require(object["sessions"] as? [[String: Any]], "\(answer.text)", sourceLocation: sourceLocation)
    }

    /// The session of `token` in the list, checked for the pinned keys and forms.
    static func entry(
        _ list: [[String: Any]], of token: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String: Any] {
        let sid = try #require(try Forge.claims(of: token).sessionID)
        let entry = try #require(list.first { $0["id"] as? String == sid }, "no session \(sid) in \(list)", sourceLocation: sourceLocation)
        Self.checkShape(entry, sourceLocation: sourceLocation)
        return entry
    }

    static func checkShape(_ entry: [String: Any], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            Set(entry.keys).isSuperset(of: ["id", "device_id", "method", "created_at", "last_used_at", "current"]), "\(entry)",
            sourceLocation: sourceLocation)
        #expect(entry["method"] is String, "\(entry)", sourceLocation: sourceLocation)
        #expect(entry["current"] as? Bool != nil, "current is not a boolean: \(entry)", sourceLocation: sourceLocation)
        let lastUsed = entry["last_used_at"] as? String ?? ""
        #expect(lastUsed.wholeMatch(of: /\d{4}-\d{2}-\d{2}/) != nil, "last_used_at \(lastUsed)", sourceLocation: sourceLocation)
        #expect(entry["created_at"] != nil && !(entry["created_at"] is NSNull), "\(entry)", sourceLocation: sourceLocation)
    }

    @Test func aDeviceSessionIsListedWithItsSidDeviceIDMethodDatesAndCurrent() async throws {
        try await withServer(.live) { client, server in
            let first = try await client.registerDevice()
            let second = try await client.registerAgain(first)
            let list = try await Self.sessions(client, first.accessToken)
            #expect(list.count == 2)
            let mine = try Self.entry(list, of: first.accessToken)
            #expect(mine["id"] as? String == first.sessionID)
            #expect(mine["device_id"] as? String == first.userID)
            #expect(mine["method"] as? String == "device")
            #expect(mine["current"] as? Bool == true)
            #expect(mine["last_used_at"] as? String == Spec31.day(server.clock.now()))
            let other = try Self.entry(list, of: second.accessToken)
            #expect(other["current"] as? Bool == false)
            #expect(list.filter { $0["current"] as? Bool == true }.count == 1)
            // Seen from the other session, current moves.
            let fromOther = try await Self.sessions(client, second.accessToken)
            #expect(try Self.entry(fromOther, of: second.accessToken)["current"] as? Bool == true)
            #expect(try Self.entry(fromOther, of: first.accessToken)["current"] as? Bool == false)
        }
    }

    @Test func lastUsedAtIsADayAndMovesWithARefresh() async throws {
        try await withServer(.live) { client, server in
            let first = try await client.registerDevice()
            let startDay = Spec31.day(server.clock.now())
            let before = try Self.entry(try await Self.sessions(client, first.accessToken), of: first.accessToken)
            #expect(before["last_used_at"] as? String == startDay)
            server.clock.advance(by: 3 * 86_400)
            let refreshed = try await client.refresh(first.refreshToken)
            #expect(refreshed.status == .ok, "\(refreshed.text)")
            let pair = try refreshed.decode(TokenPairResponse.self)
            let after = try Self.entry(try await Self.sessions(client, pair.accessToken), of: pair.accessToken)
            #expect(after["last_used_at"] as? String == Spec31.day(server.clock.now()))
            #expect(after["last_used_at"] as? String != startDay)
            #expect("\(after["created_at"] ?? "")" == "\(before["created_at"] ?? "")")
        }
    }

    @Test func theAccessCodeMethod() async throws {
        try await withServer(.live) { client, server in
            let device = try await client.registerDevice()
            let (code, _) = try await server.services.accessCodes.issue(userID: device.userID, expiresIn: nil, note: nil)
            let exchanged = try await client.send(.post, "/api/v1/auth/access-code/exchange", body: AccessCodeExchangeRequest(accessCode: code))
            let pair = try exchanged.decode(TokenPairResponse.self)
            let list = try await Self.sessions(client, pair.accessToken)
            #expect(try Self.entry(list, of: pair.accessToken)["method"] as? String == "access_code")
            #expect(try Self.entry(list, of: device.accessToken)["method"] as? String == "device")
        }
    }

    @Test func theGoogleAndAppleMethods() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let google = try await Spec31.googleSignIn(client, server, subject: "1093").decode(TokenPairResponse.self)
            #expect(try Self.entry(try await Self.sessions(client, google.accessToken), of: google.accessToken)["method"] as? String == "google")
            let apple = try await Spec31.appleSignIn(client, server, subject: "001.\(UUID().uuidString)").decode(TokenPairResponse.self)
            #expect(try Self.entry(try await Self.sessions(client, apple.accessToken), of: apple.accessToken)["method"] as? String == "apple")
        }
    }

    @Test(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason)) func thePasswordMethod() async throws {
        try await withMailServer { client, _, peer in
            let pair = try await client.verifiedAccount(newAddress(), "correct horse battery staple", peer: peer)
            #expect(try Self.entry(try await Self.sessions(client, pair.accessToken), of: pair.accessToken)["method"] as? String == "password")
        }
    }

    @Test func endedSessionsAreNotListed() async throws {
        try await withServer(.live) { client, _ in
            let first = try await client.registerDevice()
            let second = try await client.registerAgain(first)
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: second.accessToken).status == .ok)
            let list = try await Self.sessions(client, first.accessToken)
            #expect(list.count == 1)
            #expect(list.first?["id"] as? String == first.sessionID)
        }
    }

    @Test func theListNeedsABearer() async throws {
        try await withServer(.live) { client, _ in
            expectUnauthorized(try await client.send(.get, Self.path))
            expectUnauthorized(try await client.send(.delete, "\(Self.path)/\(UUID().uuidString.lowercased())"))
        }
    }

    @Test func deletingASessionIs204EndsItsRefreshAndAccessTokenAndItsSocketHearsLogout() async throws {
        try await withServer(.live) { client, _ in
            let first = try await client.registerDevice()
            let second = try await client.registerAgain(first)
            try await expectAccepted(second.accessToken, by: client)
            let socket = try await EventSocketClient.open(port: client.port!, token: second.accessToken)
            #expect(try await socket.next().type == "connected")
            let sid = try #require(try Forge.claims(of: second.accessToken).sessionID)
            let answer = try await client.send(.delete, "\(Self.path)/\(sid)", bearer: first.accessToken)
            #expect(answer.status == .noContent, "\(answer.text)")
            #expect(answer.body.readableBytes == 0)
            let revoked = try await socket.next()
            #expect(revoked.type == "session.revoked")
            #expect(revoked.reason == "logout")
            try await expectRefused(second.accessToken, by: client)
            let refresh = try await client.refresh(second.refreshToken)
            #expect(refresh.status == .unauthorized, "\(refresh.text)")
            try await expectAccepted(first.accessToken, by: client)
            #expect(try await Self.sessions(client, first.accessToken).map { $0["id"] as? String } == [first.sessionID])
        }
    }

    @Test func anIDThatIsNotOneOfTheCallersLiveSessionsIs404AndChangesNothing() async throws {
        try await withServer(.live) { client, server in
            let caller = try await client.registerDevice()
            let ended = try await client.registerAgain(caller)
            #expect(try await client.send(.post, "/api/v1/auth/logout", bearer: ended.accessToken).status == .ok)
            let stranger = try await client.registerDevice()
            let strangerSID = try #require(try Forge.claims(of: stranger.accessToken).sessionID)
            let endedSID = try #require(try Forge.claims(of: ended.accessToken).sessionID)
            let before = try await Spec31.snapshot(server, tables: ["sessions", "refresh_tokens"])
            for id in [strangerSID, endedSID, UUID().uuidString.lowercased(), UUID().uuidString, "not-a-session", "%20", "1"] {
                let answer = try await client.send(.delete, "\(Self.path)/\(id)", bearer: caller.accessToken)
                Spec31.expectStatus(answer, .notFound, .notFound, "DELETE \(id)")
            }
            #expect(try await Spec31.snapshot(server, tables: ["sessions", "refresh_tokens"]) == before)
            try await expectAccepted(stranger.accessToken, by: client)
            try await expectAccepted(caller.accessToken, by: client)
            #expect(try await client.refresh(stranger.refreshToken).status == .ok)
        }
    }
}

/// Issue 31, export: `GET /api/v1/users/me/export`.
@Suite struct Spec31ExportTests {
    static let path = "/api/v1/users/me/export"

    @Test func theExportHasExactlyThePinnedKeysAsJSON() async throws {
        try await withServer(.live) { client, _ in
            let device = try await client.registerDevice()
            let answer = try await client.send(.get, Self.path, bearer: device.accessToken)
            #expect(answer.status == .ok, "\(answer.text)")
            #expect(answer.headers[.contentType]?.hasPrefix("application/json") == true, "\(String(describing: answer.headers[.contentType]))")
            let object = try Spec31.object(answer)
            #expect(Set(object.keys) == ["user", "identities", "devices", "sessions", "budget", "usage", "audit_events"], "\(object.keys.sorted())")
            #expect(answer.text.contains(device.userID))
        }
    }

    /// What the export must not hold, in it or as a hash the database keeps: `secrets` and the user's stored hashes.
    static func expectNoSecret(in text: String, _ secrets: [String], ofUser userID: String, _ server: TestServer) async throws {
        let hashes = try await server.services.database.read { sql in
            var found: [String] = []
            for query: SQLQueryString in [
                "SELECT r.token_hash AS h FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE s.user_id = \(bind: userID)",
                "SELECT secret_hash AS h FROM devices WHERE user_id = \(bind: userID)",
                "SELECT password_hash AS h FROM email_accounts WHERE user_id = \(bind: userID)",
            ] {
                for row in try await sql.raw(query).all() { found.append(try row.decode(column: "h", as: String.self)) }
            }
            return found
        }
        #expect(!hashes.isEmpty)
        for secret in secrets + hashes where !secret.isEmpty {
            #expect(!text.contains(secret), "the export holds a secret or its hash (\(secret.prefix(6))…)")
        }
        // No hash of anything, in hex or base64: no run of 64 hex digits, no run of 43 base64 characters.
        #expect(text.firstMatch(of: /[0-9a-fA-F]{64}/) == nil, "a 64-hex-digit string in the export")
        #expect(
            text.firstMatch(of: /[A-Za-z0-9_\-+\/]{43,}/) == nil,
            "a long base64 string in the export: \(text.firstMatch(of: /[A-Za-z0-9_\-+\/]{43,}/)?.output ?? "")")
    }

    /// Nothing secret: no token, device secret or refresh token, nor any hash the database keeps of them.
    @Test func theExportHoldsNoTokenSecretOrHashOfOne() async throws {
        try await Spec31.withApple { client, server in
            let device = try await client.registerDevice()
            let second = try await client.registerAgain(device)
            let refreshed = try await client.refresh(second.refreshToken).decode(TokenPairResponse.self)
            let linked = try await Spec31.appleSignIn(client, server, subject: "001.4242", bearer: device.accessToken)
            #expect(linked.status == .ok, "\(linked.text)")
            let (code, _) = try await server.services.accessCodes.issue(userID: device.userID, expiresIn: nil, note: "ticket")
            let answer = try await client.send(.get, Self.path, bearer: device.accessToken)
            #expect(answer.status == .ok, "\(answer.text)")
            #expect(answer.text.contains("001.4242") && answer.text.contains("apple"), "the identity's provider and subject are exported")
            let secrets = [
                device.accessToken, device.refreshToken, second.accessToken, second.refreshToken, refreshed.accessToken, refreshed.refreshToken,
                code, try #require(device.deviceSecret), linked.text,
            ]
            try await Self.expectNoSecret(in: answer.text, secrets, ofUser: device.userID, server)
        }
    }

    @Test func aGoogleIdentityIsExportedAsProviderAndSubject() async throws {
        try await Spec31.withGoogle { client, server, _ in
            let device = try await client.registerDevice()
            let linked = try await Spec31.googleSignIn(
                client, server, subject: "4242", extra: ["email": "me@gmail.com", "email_verified": true], bearer: device.accessToken)
            #expect(linked.status == .ok, "\(linked.text)")
            let answer = try await client.send(.get, Self.path, bearer: device.accessToken)
            let identities = try #require(try Spec31.object(answer)["identities"] as? [[String: Any]], "\(answer.text)")
            #expect(identities.contains { $0["provider"] as? String == "google" && $0["subject"] as? String == "4242" }, "\(identities)")
            try await Self.expectNoSecret(in: answer.text, [device.accessToken, device.refreshToken], ofUser: device.userID, server)
        }
    }

    /// A second factor's TOTP secret and recovery codes are secrets too.
    @Test(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason)) func theExportHoldsNoSecondFactorSecretOrRecoveryCode() async throws {
        try await withMailServer { client, server, peer in
            let account = try await client.accountWithSecondFactor(peer: peer, server: server)
            let session = try await client.refresh(account.confirmingSession.refreshToken).decode(TokenPairResponse.self)
            let answer = try await client.send(.get, Self.path, bearer: session.accessToken)
            #expect(answer.status == .ok, "\(answer.text)")
            let secrets = [account.factor.secret, session.accessToken, session.refreshToken, account.password] + account.factor.recoveryCodes
            try await Self.expectNoSecret(in: answer.text, secrets, ofUser: account.userID, server)
            let codes = try await server.services.database.read { sql in
                try await sql.raw("SELECT * FROM recovery_codes").all().count
            }
            #expect(codes > 0)
        }
    }

    @Test(.enabled(if: SMTPPeer.isAvailable, SMTPPeer.skipReason)) func theExportOfAPasswordUserHoldsNoPasswordOrItsHash() async throws {
        try await withMailServer { client, server, peer in
            let password = "correct horse battery staple"
            let email = newAddress()
            let pair = try await client.verifiedAccount(email, password, peer: peer)
            let answer = try await client.send(.get, Self.path, bearer: pair.accessToken)
            #expect(answer.status == .ok, "\(answer.text)")
            let hash = try await server.services.database.read { sql in
                try await sql.raw("SELECT password_hash FROM email_accounts WHERE user_id = \(bind: pair.userID)").first()
                    .map { try $0.decode(column: "password_hash", as: String.self) }
            }
            let stored = try #require(hash)
            #expect(answer.text.contains(email.lowercased()) || answer.text.contains(email))
            for secret in [password, stored, pair.accessToken, pair.refreshToken] { #expect(!answer.text.contains(secret)) }
            #expect(!answer.text.contains("$argon2"))
        }
    }

    @Test func aSessionThatIsNotRecentGets403ReauthenticationRequired() async throws {
        try await withServer(.live) { client, server in
            let device = try await client.registerDevice()
            server.clock.advance(by: 601)  // past tokens.recent-authentication (600 s)
            let pair = try await client.refresh(device.refreshToken).decode(TokenPairResponse.self)
            let answer = try await client.send(.get, Self.path, bearer: pair.accessToken)
            Spec31.expectStatus(answer, .forbidden, .reauthenticationRequired, "stale session")
        }
    }

    @Test func theExportNeedsABearer() async throws {
        try await withServer(.live) { client, _ in expectUnauthorized(try await client.send(.get, Self.path)) }
    }
}

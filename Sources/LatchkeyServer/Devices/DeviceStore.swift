import Foundation
import LatchkeyAPI
import SQLKit

/// Registered devices.
@available(LatchkeyServer 1.0, *)
public protocol DeviceStore: Sendable {
    func device(id: String) async throws -> DeviceRecord?
    /// Creates the device's user (whose ID is the device ID), the device and its first session at once.
    /// Throws ``StoreError/conflict`` when the user or the device exists already.
    func registerNewDevice(_ device: DeviceRecord, session: NewSession) async throws
}

@available(LatchkeyServer 1.0, *)
extension SQLLatchkeyStore: DeviceStore {
    public func device(id: String) async throws -> DeviceRecord? {
        try await self.database.read { sql in
            try await sql.raw("SELECT id, user_id, secret_hash, created_at, last_seen_at FROM devices WHERE id = \(bind: id)")
                .first().map(Self.device(from:))
        }
    }

    public func registerNewDevice(_ device: DeviceRecord, session: NewSession) async throws {
        try await self.database.transaction { sql in
            try await sql.raw(
                """
                INSERT INTO users (id, kind, created_at)
                VALUES (\(bind: device.userID), \(bind: UserKind.device.rawValue), \(bind: device.createdAt.stored))
                """
            ).run()
            try await sql.raw(
                """
                INSERT INTO devices (id, user_id, secret_hash, created_at, last_seen_at)
                VALUES (\(bind: device.id), \(bind: device.userID), \(bind: device.secretHash), \(bind: device.createdAt.stored),
                        \(bind: device.createdAt.stored))
                """
            ).run()
            try await Self.insert(session, on: sql)
        }
    }
}

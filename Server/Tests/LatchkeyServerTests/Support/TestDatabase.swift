import Foundation
import LatchkeyServer
import Logging
import SQLKit
import Testing

/// The databases the tests run on.
enum TestBackend: String, CaseIterable, CustomStringConvertible, Sendable {
    case sqlite
    case postgresql

    var description: String { self.rawValue }

    /// The backend of the general suites: SQLite, or PostgreSQL when `LATCHKEY_TEST_BACKEND=postgresql`
    /// (`scripts/test` runs the live-socket suites a second time that way).
    static var general: TestBackend {
        ProcessInfo.processInfo.environment["LATCHKEY_TEST_BACKEND"] == "postgresql" ? .postgresql : .sqlite
    }
}

/// The PostgreSQL the tests may use: `LATCHKEY_TEST_POSTGRES_URL`, a throwaway database (`scripts/test`
/// starts a cluster and sets it). Each test gets a schema of its own in it.
enum TestPostgres {
    static var url: String? {
        ProcessInfo.processInfo.environment["LATCHKEY_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    static var isAvailable: Bool { self.url != nil }

    /// Why the PostgreSQL suites are skipped.
    static let skipReason: Comment =
        "LATCHKEY_TEST_POSTGRES_URL is not set, so there is no PostgreSQL to test against (scripts/test starts a throwaway cluster and sets it)"

    struct Unavailable: Error, CustomStringConvertible {
        var description: String {
            "LATCHKEY_TEST_BACKEND=postgresql needs LATCHKEY_TEST_POSTGRES_URL (a throwaway PostgreSQL database)"
        }
    }

    /// Creates a fresh schema and returns the URL that puts a server's tables in it.
    static func freshDatabaseURL() async throws -> String {
        guard let base = self.url else { throw Unavailable() }
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let database = try PostgresLatchkeyDatabase(url: base, timeout: 30, maximumConnections: 1, logger: TestServer.quietLogger)
        try await database.whileRunning {
            try await database.transaction { sql in try await sql.raw("CREATE SCHEMA \(unsafeRaw: schema)").run() }
        }
        return base + (base.contains("?") ? "&" : "?") + "search_path=" + schema
    }
}

extension TestBackend {
    /// A `database` setting for a fresh, empty database of this kind (`directory` holds SQLite's file).
    func freshDatabase(in directory: URL) async throws -> String {
        switch self {
        case .sqlite: directory.appendingPathComponent("latchkey.sqlite").path
        case .postgresql: try await TestPostgres.freshDatabaseURL()
        }
    }
}

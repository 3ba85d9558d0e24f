import Foundation
import Logging
import NIOCore
import SQLKit
import SQLiteKit
import SQLiteNIO
import VaporCSQLite

/// One SQLite connection driven synchronously on the calling thread, exposed to SQLKit as an `SQLDatabase`.
///
/// SQLiteNIO runs every statement on a thread pool and resumes the caller afterwards: two thread
/// switches per statement, and a transaction of six statements held the single writer lock for all
/// twelve. SQLite statements on a local file take microseconds, so running them in line is cheaper
/// than handing them off; callers serialise access (``SQLiteLatchkeyDatabase`` holds a lock per
/// transaction). Prepared statements are cached by their SQL text.
///
/// It uses the SQLite library that sqlite-nio vendors, so no system SQLite is needed.
final class InlineSQLiteConnection: SQLDatabase, @unchecked Sendable {
    // @unchecked: `handle` and `statements` are touched only by the holder of SQLiteLatchkeyDatabase's lock.
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    let logger: Logger
    let eventLoop: any EventLoop
    let dialect: any SQLDialect = SQLiteDialect()
    var queryLogLevel: Logger.Level? { nil }  // statements carry hashes and secrets as binds: never log them
    private let encoder = SQLiteDataEncoder()
    private let decoder = SQLiteDataDecoder()

    init(path: String, busyTimeout: Duration = .seconds(5), logger: Logger) throws {
        self.logger = logger
        self.busyTimeout = busyTimeout
        self.eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        let status = sqlite_nio_sqlite3_open_v2(path, &self.handle, flags, nil)
        guard status == SQLITE_OK else {
            let message = self.errorMessage
            sqlite_nio_sqlite3_close(self.handle)
            self.handle = nil
            throw StoreError.unavailable("cannot open SQLite database at \(path): \(message)")
        }
    }

    deinit { self.close() }

    func close() {
        for statement in self.statements.values { sqlite_nio_sqlite3_finalize(statement) }
        self.statements = [:]
        if let handle = self.handle { sqlite_nio_sqlite3_close_v2(handle) }
        self.handle = nil
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        do {
            try self.run(query, onRow)
            return self.eventLoop.makeSucceededVoidFuture()
        } catch {
            return self.eventLoop.makeFailedFuture(error)
        }
    }

    /// Runs `query`; while another process holds the lock it needs (`SQLITE_BUSY`: the CLI writing beside a server), it
    /// waits by suspending and trying again, never by blocking a thread of Swift's cooperative pool (on 2 cores that is
    /// half of it), and gives up with ``StoreError/unavailable(_:)`` after ``busyTimeout``.
    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await self.execute(sql: query, waitingAtMost: self.busyTimeout, onRow)
    }

    /// ``execute(sql:_:)`` giving up after `wait`; nil waits however long another process holds the lock.
    func execute(sql query: any SQLExpression, waitingAtMost wait: Duration?, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        let clock = ContinuousClock()
        let deadline = wait.map { clock.now.advanced(by: $0) }
        var pause = Duration.milliseconds(1)
        while true {
            do {
                return try self.runOnce(query, onRow)
            } catch is Busy {
                if let deadline, clock.now >= deadline {
                    throw StoreError.unavailable("the database file was locked for longer than its timeout")
                }
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(25))
            }
        }
    }

    /// How long ``execute(sql:_:)`` keeps retrying a statement another process has locked out.
    let busyTimeout: Duration

    /// `SQLITE_BUSY` before any row: the statement did nothing and can be tried again.
    private struct Busy: Error {}

    /// Runs `query` on the calling thread; `SQLITE_BUSY` is an error here (only the async path waits).
    func run(_ query: any SQLExpression, _ onRow: (any SQLRow) -> Void = { _ in }) throws {
        do {
            try self.runOnce(query, onRow)
        } catch is Busy {
            throw StoreError.unavailable("the database file is locked by another process")
        }
    }

    private func runOnce(_ query: any SQLExpression, _ onRow: (any SQLRow) -> Void) throws {
        let (sql, binds) = self.serialize(query)
        guard self.handle != nil else { throw StoreError.unavailable("the database is closed") }
        let statement = try self.prepared(sql)
        defer {
            sqlite_nio_sqlite3_reset(statement)
            sqlite_nio_sqlite3_clear_bindings(statement)
        }
        for (index, bind) in binds.enumerated() {
            try self.check(Self.bind(try self.encoder.encode(bind), to: statement, at: Int32(index + 1)))
        }
        let columnCount = sqlite_nio_sqlite3_column_count(statement)
        let columns = (0..<columnCount).map { String(cString: sqlite_nio_sqlite3_column_name(statement, $0)) }
        var rows = 0
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { return }
            if status & 0xff == SQLITE_BUSY && rows == 0 { throw Busy() }
            guard status == SQLITE_ROW else { throw self.error(status) }
            rows += 1
            let values = (0..<columnCount).map { Self.value(of: statement, at: $0) }
            onRow(Row(columns: columns, values: values, decoder: self.decoder))
        }
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = self.statements[sql] { return statement }
        var statement: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(self.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw self.error(status) }
        // Schema statements run once; keep only the statements the stores repeat.
        if self.statements.count < 256 { self.statements[sql] = statement }
        return statement
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func bind(_ data: SQLiteData, to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch data {
        case .integer(let value): sqlite_nio_sqlite3_bind_int64(statement, index, Int64(value))
        case .float(let value): sqlite_nio_sqlite3_bind_double(statement, index, value)
        case .text(let value):
            sqlite_nio_sqlite3_bind_text64(statement, index, value, UInt64(value.utf8.count), Self.transient, UInt8(SQLITE_UTF8))
        case .blob(let value):
            value.withUnsafeReadableBytes {
                sqlite_nio_sqlite3_bind_blob64(statement, index, $0.baseAddress, UInt64($0.count), Self.transient)
            }
        case .null: sqlite_nio_sqlite3_bind_null(statement, index)
        }
    }

    private static func value(of statement: OpaquePointer, at column: Int32) -> SQLiteData {
        switch sqlite_nio_sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: .integer(SQLiteInt64(sqlite_nio_sqlite3_column_int64(statement, column)))
        case SQLITE_FLOAT: .float(sqlite_nio_sqlite3_column_double(statement, column))
        case SQLITE_TEXT: .text(String(cString: sqlite_nio_sqlite3_column_text(statement, column)))
        case SQLITE_BLOB:
            .blob(
                ByteBuffer(
                    bytes: UnsafeRawBufferPointer(
                        start: sqlite_nio_sqlite3_column_blob(statement, column), count: Int(sqlite_nio_sqlite3_column_bytes(statement, column)))))
        default: .null
        }
    }

    private func check(_ status: Int32) throws {
        guard status == SQLITE_OK else { throw self.error(status) }
    }

    private var errorMessage: String {
        self.handle.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "unknown SQLite error"
    }

    /// Constraint violations are conflicts (a row exists); anything else means the database failed.
    private func error(_ status: Int32) -> StoreError {
        status & 0xff == SQLITE_CONSTRAINT ? .conflict : .unavailable(self.errorMessage)
    }

    struct Row: SQLRow {
        let columns: [String]
        let values: [SQLiteData]
        let decoder: SQLiteDataDecoder

        var allColumns: [String] { self.columns }
        func contains(column: String) -> Bool { self.columns.contains(column) }

        func decodeNil(column: String) throws -> Bool {
            self.value(column).map { $0 == .null } ?? true
        }

        func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
            guard let value = self.value(column) else {
                throw DecodingError.valueNotFound(D.self, .init(codingPath: [], debugDescription: "No column \(column) in the row."))
            }
            return try self.decoder.decode(D.self, from: value)
        }

        private func value(_ column: String) -> SQLiteData? {
            self.columns.firstIndex(of: column).map { self.values[$0] }
        }
    }
}

import Logging
import NIOCore
import PostgresKit
import PostgresNIO
import SQLKit

/// A pooled connection's `SQLDatabase` that refuses a statement once the connection has closed.
///
/// PostgresNIO (1.33) writes a statement to the connection's channel from whatever thread asks, and waits for the
/// answer; a statement whose write reaches the channel after it closed (PostgreSQL ending the session, `57P01`, between
/// two statements of a transaction) is dropped with no answer at all, and its caller waits forever: a `COMMIT` or
/// `ROLLBACK` after a shutdown, and with it the request and the server's graceful shutdown. Here every statement is
/// handed over on the channel's event loop after checking, in the same turn, that the channel is still open: an open
/// channel's handler answers every statement it is given (with the loss of the connection if it comes to that), and a
/// closed one is refused at once as unavailable.
package struct ConnectionBoundSQLDatabase: SQLDatabase {
    let base: any SQLDatabase
    package let connection: PostgresConnection

    package init(_ connection: PostgresConnection) {
        self.connection = connection
        self.base = connection.sql(queryLogLevel: nil)
    }

    package var logger: Logger { self.base.logger }
    package var eventLoop: any EventLoop { self.base.eventLoop }
    package var version: (any SQLDatabaseReportedVersion)? { self.base.version }
    package var dialect: any SQLDialect { self.base.dialect }
    package var queryLogLevel: Logger.Level? { self.base.queryLogLevel }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        let (base, connection) = (self.base, self.connection)
        // PostgresKit's execute writes to the channel within this turn of the loop (its bindings future is already complete).
        return connection.eventLoop.flatSubmit {
            guard !connection.isClosed else {
                return connection.eventLoop.makeFailedFuture(StoreError.unavailable("PostgreSQL closed the connection"))
            }
            return base.execute(sql: query, onRow)
        }
    }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await self.execute(sql: query, onRow).get()
    }
}

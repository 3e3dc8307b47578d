package import CaravanCore
import Logging
import PostgresNIO

extension PostgresStore {
    /// Runs `body` inside one `REPEATABLE READ READ ONLY` transaction whose snapshot is exported
    /// (`pg_export_snapshot()`): `body` gets the snapshot's name, which `pg_dump --snapshot` takes to dump exactly
    /// this state, and a reader of the same snapshot. The transaction stays open until `body` returns.
    package func withExportedSnapshot<T: Sendable>(_ body: @escaping @Sendable (String, any SnapshotReader) async throws -> T) async throws -> T {
        let logger = self.logger
        return try await withConnection { connection in
            try await Self.inTransaction(connection, logger: logger, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                let rows = try await connection.query("SELECT pg_export_snapshot()", logger: logger).collect()
                guard let name = try rows.first?.decode(String.self) else {
                    throw CaravanError(.internalFailure, "the database exported no snapshot")
                }
                return try await body(name, PostgresSnapshotReader(connection: connection, logger: logger))
            }
        }
    }

    /// Gives the deployment a new random sync epoch (a restored deployment is another history: every sync cursor
    /// made before must refetch).
    package func renewSyncEpoch() async throws {
        let logger = self.logger
        try await withConnection { connection in
            _ = try await connection.query(#"UPDATE "caravan_sync_state" SET "epoch" = md5(random()::text || clock_timestamp()::text || pg_backend_pid()::text) WHERE "id" = 1"#,
                                           logger: logger).collect()
        }
    }

    /// The number of tables and views in the connection's current schema (0: nothing was ever created there).
    package func relationCount() async throws -> Int {
        let logger = self.logger
        return try await withConnection { connection in
            let rows = try await connection.query(
                "SELECT count(*)::int8 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'v', 'm', 'p')",
                logger: logger).collect()
            return Int(try rows.first?.decode(Int64.self) ?? 0)
        }
    }
}

/// The reads of one exported-snapshot transaction (see `withExportedSnapshot`).
struct PostgresSnapshotReader: SnapshotReader {
    let connection: PostgresConnection
    let logger: Logger

    func fetch(_ plan: ReadPlan) async throws -> ReadResult {
        let (select, _) = PostgresRead.compile(plan)
        do {
            let rows = try await PostgresRows.collect(try await connection.query(select.query, logger: logger), types: plan.outputs.map(\.column.type))
            return ReadResult(outputs: plan.outputs, rows: rows, totalCount: nil)
        } catch {
            throw PostgresErrors.translate(error, table: plan.table)
        }
    }
}

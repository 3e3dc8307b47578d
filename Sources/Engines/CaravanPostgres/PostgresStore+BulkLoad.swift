package import CaravanCore
import CaravanSQL
import Logging
import PostgresNIO

extension PostgresStore: BulkLoadingStore {
    /// One transaction on one leased connection: BEGIN, `body`, COMMIT (ROLLBACK when it throws).
    package func withBulkLoad<T: Sendable>(_ body: @escaping @Sendable (any BulkLoader) async throws -> T) async throws -> T {
        let logger = self.logger
        return try await withConnection { connection in
            try await Self.inTransaction(connection, logger: logger) {
                try await body(PostgresBulkLoader(connection: connection, logger: logger))
            }
        }
    }
}

/// The statements of a bulk load. Identifiers come from the schema model (quoted); every value is bound.
final class PostgresBulkLoader: BulkLoader {
    let connection: PostgresConnection
    let logger: Logger

    /// Postgres takes at most 65,535 parameters per statement; a batch stays well below.
    static let maximumParameters = 30_000

    init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    private func run(_ sql: PostgresSQL, table: TableSchema?) async throws {
        do {
            _ = try await connection.query(sql.query, logger: logger).collect()
        } catch {
            throw PostgresErrors.translate(error, table: table)
        }
    }

    func removeAllRows(of tables: [TableSchema]) async throws {
        guard !tables.isEmpty else { return }
        var sql = PostgresSQL()
        sql.append("TRUNCATE \(tables.map { PostgresSQL.quote($0.name) }.joined(separator: ", ")) RESTART IDENTITY")
        try await run(sql, table: nil)
    }

    /// Multi-row INSERTs with `OVERRIDING SYSTEM VALUE` (identity columns keep their values), the table's own
    /// triggers disabled meanwhile so derived columns keep the values copied (foreign-key checks stay on).
    func insert(_ rows: [[Value]], into table: TableSchema) async throws {
        guard !rows.isEmpty else { return }
        let name = PostgresSQL.quote(table.name)
        var disable = PostgresSQL()
        disable.append("ALTER TABLE \(name) DISABLE TRIGGER USER")
        try await run(disable, table: table)
        let perStatement = max(1, Self.maximumParameters / max(1, table.columns.count))
        var start = rows.startIndex
        while start < rows.endIndex {
            let end = min(start + perStatement, rows.endIndex)
            try await run(Self.insertStatement(rows[start..<end], into: table), table: table)
            start = end
        }
        var enable = PostgresSQL()
        enable.append("ALTER TABLE \(name) ENABLE TRIGGER USER")
        try await run(enable, table: table)
    }

    static func insertStatement(_ rows: ArraySlice<[Value]>, into table: TableSchema) throws -> PostgresSQL {
        var sql = PostgresSQL()
        sql.append("INSERT INTO \(PostgresSQL.quote(table.name)) (\(table.columns.map { PostgresSQL.quote($0.name) }.joined(separator: ", "))) ")
        sql.append("OVERRIDING SYSTEM VALUE VALUES ")
        for (r, row) in rows.enumerated() {
            guard row.count == table.columns.count else {
                throw CaravanError(.internalFailure, "a copied row of \(table.name) has \(row.count) values for \(table.columns.count) columns")
            }
            sql.append(r == 0 ? "(" : ", (")
            for (i, (column, value)) in zip(table.columns, row).enumerated() {
                if i > 0 { sql.append(", ") }
                if column.type == .json {
                    // Through `json`, not `jsonb`: a `json` column (the change log) keeps the text as it was, key order
                    // included; a `jsonb` column takes it by assignment cast.
                    sql.value(value.isNull ? .null : value, as: .text)
                    sql.append("::json")
                } else {
                    sql.value(value, as: column.type)
                }
            }
            sql.append(")")
        }
        return sql
    }

    func resetIdentity(of table: TableSchema) async throws {
        var find = PostgresSQL()
        find.append("SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = to_regclass(")
        find.value(.text(PostgresSQL.quote(table.name)), as: .text)
        find.append(") AND a.attidentity <> '' AND NOT a.attisdropped")
        let columns: [String]
        do {
            columns = try await connection.query(find.query, logger: logger).collect().map { try $0.decode(String.self) }
        } catch {
            throw PostgresErrors.translate(error, table: table)
        }
        for column in columns {
            guard let known = table.column(named: column) else { continue }
            var reset = PostgresSQL()
            reset.append("SELECT setval(pg_get_serial_sequence(")
            reset.value(.text(PostgresSQL.quote(table.name)), as: .text)
            reset.append(", ")
            reset.value(.text(known.name), as: .text)
            reset.append("), COALESCE((SELECT max(\(PostgresSQL.quote(known.name))) FROM \(PostgresSQL.quote(table.name))), 0) + 1, false)")
            try await run(reset, table: table)
        }
    }
}

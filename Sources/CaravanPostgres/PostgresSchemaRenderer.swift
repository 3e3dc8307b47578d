import CaravanCore

/// Renders the schema model to PostgreSQL DDL. Used to write frozen migrations and to create ad-hoc tables in tests;
/// a shipped migration's SQL is never regenerated from it.
///
/// Physical types: text, int8, float8, numeric(p,s), boolean, uuid, timestamptz, date, jsonb (JSON), text[] (text
/// arrays). Defaults `now()` and `gen_random_uuid()`. Index kind `.arrayMembership` becomes a GIN index.
public enum PostgresSchemaRenderer {
    public static func createStatements(for table: TableSchema) throws -> [String] {
        var lines: [String] = []
        for column in table.columns {
            var line = "  \(PostgresSQL.quote(column.name)) \(PostgresSQL.typeName(column.type))"
            if !column.isNullable { line += " NOT NULL" }
            if let defaultValue = column.defaultValue { line += " DEFAULT \(defaultExpression(defaultValue, type: column.type))" }
            lines.append(line)
        }
        lines.append("  PRIMARY KEY (\(table.primaryKey.map(PostgresSQL.quote).joined(separator: ", ")))")
        for unique in table.uniques {
            lines.append("  UNIQUE (\(unique.map(PostgresSQL.quote).joined(separator: ", ")))")
        }
        for key in table.foreignKeys {
            var line = "  FOREIGN KEY (\(key.columns.map(PostgresSQL.quote).joined(separator: ", "))) REFERENCES \(PostgresSQL.quote(key.referencedTable)) (\(key.referencedColumns.map(PostgresSQL.quote).joined(separator: ", ")))"
            switch key.onDelete {
            case .noAction: break
            case .cascade: line += " ON DELETE CASCADE"
            case .setNull: line += " ON DELETE SET NULL"
            case .restrict: line += " ON DELETE RESTRICT"
            }
            lines.append(line)
        }
        for check in table.checks {
            var sql = PostgresSQL(mode: .inline)
            sql.predicate(try check.rule.bound(to: table))
            lines.append("  CONSTRAINT \(PostgresSQL.quote(check.name)) CHECK (\(sql.text))")
        }
        var statements = ["CREATE TABLE \(PostgresSQL.quote(table.name)) (\n\(lines.joined(separator: ",\n"))\n)"]
        for index in table.indexes {
            statements.append(try createIndex(index, on: table))
        }
        return statements
    }

    static func createIndex(_ index: Index, on table: TableSchema) throws -> String {
        let keys = index.keys.map { PostgresSQL.quote($0.column) + ($0.descending ? " DESC" : "") }.joined(separator: ", ")
        let method = index.kind == .arrayMembership ? " USING gin" : ""
        var statement = "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(PostgresSQL.quote(index.name)) ON \(PostgresSQL.quote(table.name))\(method) (\(keys))"
        if let predicate = index.predicate {
            var sql = PostgresSQL(mode: .inline)
            sql.predicate(try predicate.bound(to: table))
            statement += " WHERE \(sql.text)"
        }
        return statement
    }

    static func defaultExpression(_ value: ColumnDefault, type: ColumnType) -> String {
        switch value {
        case .value(let v): PostgresSQL.literal(v, as: type)
        case .now: "now()"
        case .randomUUID: "gen_random_uuid()"
        }
    }
}

import CaravanCore

/// Renders the schema model to SQLite DDL. Used to write frozen migrations and to create ad-hoc tables in tests;
/// a shipped migration's SQL is never regenerated from it.
///
/// Physical types: text, uuid, timestamp (canonical UTC text) and date → TEXT; integer and boolean (0/1) →
/// INTEGER; double and decimal → REAL; json and textArray → TEXT holding validated JSON.
/// Index kind `.arrayMembership` (Postgres GIN) has no SQLite equivalent and is skipped.
public enum SQLiteSchemaRenderer {
    public static func createStatements(for table: TableSchema) throws -> [String] {
        var lines: [String] = []
        for column in table.columns {
            var line = "  \(SQLiteSQL.quote(column.name)) \(physicalType(column.type))"
            if !column.isNullable { line += " NOT NULL" }
            if let defaultValue = column.defaultValue { line += " DEFAULT \(defaultExpression(defaultValue))" }
            if let check = typeCheck(column) { line += " CHECK (\(check))" }
            lines.append(line)
        }
        lines.append("  PRIMARY KEY (\(table.primaryKey.map(SQLiteSQL.quote).joined(separator: ", ")))")
        for unique in table.uniques {
            lines.append("  UNIQUE (\(unique.map(SQLiteSQL.quote).joined(separator: ", ")))")
        }
        for key in table.foreignKeys {
            var line = "  FOREIGN KEY (\(key.columns.map(SQLiteSQL.quote).joined(separator: ", "))) REFERENCES \(SQLiteSQL.quote(key.referencedTable)) (\(key.referencedColumns.map(SQLiteSQL.quote).joined(separator: ", ")))"
            switch key.onDelete {
            case .noAction: break
            case .cascade: line += " ON DELETE CASCADE"
            case .setNull: line += " ON DELETE SET NULL"
            case .restrict: line += " ON DELETE RESTRICT"
            }
            lines.append(line)
        }
        for check in table.checks {
            var sql = SQLiteSQL(mode: .inline)
            sql.predicate(try check.rule.bound(to: table))
            lines.append("  CONSTRAINT \(SQLiteSQL.quote(check.name)) CHECK (\(sql.text))")
        }
        var statements = ["CREATE TABLE \(SQLiteSQL.quote(table.name)) (\n\(lines.joined(separator: ",\n"))\n)"]
        for index in table.indexes where index.kind == .btree {
            let keys = index.keys.map { SQLiteSQL.quote($0.column) + ($0.descending ? " DESC" : "") }.joined(separator: ", ")
            var statement = "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(SQLiteSQL.quote(index.name)) ON \(SQLiteSQL.quote(table.name)) (\(keys))"
            if let predicate = index.predicate {
                var sql = SQLiteSQL(mode: .inline)
                sql.predicate(try predicate.bound(to: table))
                statement += " WHERE \(sql.text)"
            }
            statements.append(statement)
        }
        return statements
    }

    static func physicalType(_ type: ColumnType) -> String {
        switch type {
        case .text, .uuid, .timestamp, .date, .json, .textArray: "TEXT"
        case .integer, .boolean: "INTEGER"
        case .double, .decimal: "REAL"
        }
    }

    static func typeCheck(_ column: Column) -> String? {
        let name = SQLiteSQL.quote(column.name)
        switch column.type {
        case .boolean: return "\(name) IN (0, 1)"
        // json_valid(NULL) is 0 on SQLite before 3.45, so NULL is allowed explicitly.
        case .json: return "\(name) IS NULL OR json_valid(\(name))"
        case .textArray: return "\(name) IS NULL OR (json_valid(\(name)) AND json_type(\(name)) = 'array')"
        case .uuid: return "length(\(name)) = 36"
        default: return nil
        }
    }

    /// Canonical UTC timestamp text with microseconds, as `Timestamp.format` writes it.
    public static let nowExpression = "(strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z')"

    static func defaultExpression(_ value: ColumnDefault) -> String {
        switch value {
        case .value(let v): SQLiteSQL.literal(v)
        case .now: nowExpression
        case .randomUUID:
            "(lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))))"
        }
    }
}

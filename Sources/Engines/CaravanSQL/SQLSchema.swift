package import CaravanCore

/// DDL rendered from the schema model, once for every dialect. Used to freeze declared migrations into files and to
/// create tables in tests; a shipped migration's file is never regenerated.
package enum SQLSchema<Syntax: SQLSyntax> {
    typealias SQL = SQLBuilder<Syntax>

    /// CREATE TABLE with its keys, checks and foreign keys, then its indexes (those the engine can build).
    package static func createTable(_ table: TableSchema) throws -> [String] {
        var lines = table.columns.map(columnDefinition)
        lines.append("  PRIMARY KEY (\(SQL.list(table.primaryKey)))")
        for unique in table.uniques {
            lines.append("  UNIQUE (\(SQL.list(unique)))")
        }
        for key in table.foreignKeys {
            var line = "  FOREIGN KEY (\(SQL.list(key.columns))) REFERENCES \(SQL.quote(key.referencedTable)) (\(SQL.list(key.referencedColumns)))"
            switch key.onDelete {
            case .noAction: break
            case .cascade: line += " ON DELETE CASCADE"
            case .setNull: line += " ON DELETE SET NULL"
            case .restrict: line += " ON DELETE RESTRICT"
            }
            lines.append(line)
        }
        for check in table.checks {
            lines.append("  CONSTRAINT \(SQL.quote(check.name)) CHECK (\(SQL.inlined(try check.rule.bound(to: table))))")
        }
        var statements = ["CREATE TABLE \(SQL.quote(table.name)) (\n\(lines.joined(separator: ",\n"))\n)"]
        for index in table.indexes {
            if let statement = try createIndex(index, on: table) { statements.append(statement) }
        }
        return statements
    }

    /// The search objects a table declares (`TableSchema.search`), as the engine builds them. A table with search
    /// has a single-column primary key (the objects are keyed by it) and only existing columns of fitting types.
    package static func createSearch(_ table: TableSchema) throws -> [String] {
        guard let indexes = table.search else {
            throw CaravanError(.invalidConfiguration, "table \(table.name) declares no search indexes")
        }
        guard table.primaryKey.count == 1 else {
            throw CaravanError(.invalidConfiguration, "search on \(table.name) needs a single-column primary key")
        }
        guard !indexes.fullText.isEmpty else {
            throw CaravanError(.invalidConfiguration, "search on \(table.name) needs at least one full-text column")
        }
        for name in indexes.fullTextColumns {
            let column = try table.requireColumn(name)
            guard column.type == .text || column.type == .textArray else {
                throw CaravanError(.invalidConfiguration, "full-text column \(table.name).\(name) is \(column.type.postgresName), not text or text[]")
            }
        }
        for name in indexes.fuzzy where try table.requireColumn(name).type != .text {
            throw CaravanError(.invalidConfiguration, "trigram column \(table.name).\(name) is not text")
        }
        for name in [indexes.geo?.latitude, indexes.geo?.longitude].compactMap({ $0 }) {
            switch try table.requireColumn(name).type {
            case .double, .decimal, .integer: break
            case let other: throw CaravanError(.invalidConfiguration, "geo column \(table.name).\(name) is \(other.postgresName), not a number")
            }
        }
        return try Syntax.createSearch(table, indexes)
    }

    /// A column as it appears in CREATE TABLE and ADD COLUMN.
    static func columnDefinition(_ column: Column) -> String {
        var line = "  \(SQL.quote(column.name)) \(Syntax.typeName(column.type))"
        if !column.isNullable { line += " NOT NULL" }
        if let defaultValue = column.defaultValue { line += " DEFAULT \(Syntax.defaultExpression(defaultValue, type: column.type))" }
        if let check = Syntax.typeCheck(column) { line += " CHECK (\(check))" }
        return line
    }

    /// CREATE INDEX, or nil when the engine has no equivalent of the index's kind.
    package static func createIndex(_ index: Index, on table: TableSchema) throws -> String? {
        guard let method = Syntax.indexMethod(index.kind) else { return nil }
        let operatorClass = Syntax.indexOperatorClass(index.kind)
        let keys = index.keys.map { SQL.quote($0.column) + operatorClass + ($0.descending ? " DESC" : "") }.joined(separator: ", ")
        var statement = "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(SQL.quote(index.name)) ON \(SQL.quote(table.name))\(method) (\(keys))"
        if let predicate = index.predicate {
            statement += " WHERE \(SQL.inlined(try predicate.bound(to: table)))"
        }
        return statement
    }

    /// ALTER TABLE … ADD COLUMN. A NOT NULL column needs a default (existing rows get it).
    package static func addColumn(_ column: Column, to table: TableSchema) throws -> String {
        if !column.isNullable && column.defaultValue == nil {
            throw CaravanError(.invalidConfiguration, "column \(table.name).\(column.name) is added NOT NULL without a default: existing rows would have no value")
        }
        let definition = columnDefinition(column).dropFirst(2)
        return "ALTER TABLE \(SQL.quote(table.name)) ADD COLUMN \(definition)"
    }

    /// The statements of declared schema changes, one per line and each ending in `;`. Deterministic: frozen into
    /// migration files and compared with them by the drift test.
    package static func render(_ changes: [SchemaChange]) throws -> String {
        var statements: [String] = []
        for change in changes {
            switch change {
            case .createTable(let table):
                statements += try createTable(table)
                if table.search != nil { statements += try createSearch(table) }
            case .addColumn(let column, let table):
                statements.append(try addColumn(column, to: table))
            case .createIndex(let index, let table):
                if let statement = try createIndex(index, on: table) { statements.append(statement) }
            case .createSearch(let table):
                statements += try createSearch(table)
            case .renameTable(let old, let new):
                statements.append("ALTER TABLE \(SQL.quote(old)) RENAME TO \(SQL.quote(new))")
            case .renameColumn(let old, let new, let table):
                statements.append("ALTER TABLE \(SQL.quote(table)) RENAME COLUMN \(SQL.quote(old)) TO \(SQL.quote(new))")
            case .dropIndex(let index, _):
                // IF EXISTS: an index of a kind the engine has no equivalent of was never built there.
                statements.append("DROP INDEX IF EXISTS \(SQL.quote(index))")
            case .dropColumn(let column, let table):
                statements.append("ALTER TABLE \(SQL.quote(table)) DROP COLUMN \(SQL.quote(column))")
            case .dropTable(let table):
                statements.append("DROP TABLE \(SQL.quote(table))")
            }
        }
        return statements.map { $0 + ";" }.joined(separator: "\n") + "\n"
    }

    /// The SQL a migration applies on this engine: its frozen file, else its declared changes rendered (nil when it
    /// has neither, or they cannot be rendered).
    package static func sql(of migration: Migration) -> String? {
        if let frozen = migration.sql[Syntax.dialect] { return frozen }
        guard !migration.changes.isEmpty else { return nil }
        return try? render(migration.changes)
    }
}

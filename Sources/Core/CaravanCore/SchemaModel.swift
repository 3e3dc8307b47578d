/// A destructive change an app declares on purpose (`AppModule(removals:)`): without it, a table, column or index that
/// its declarations no longer have is refused by `caravan migrations new` rather than dropped with its data.
public enum SchemaRemoval: Sendable, Hashable {
    /// The table and its rows.
    case table(String)
    /// A column (first) of a table (second) and its values.
    case column(String, of: String)
    /// An index (first) of a table (second).
    case index(String, of: String)
}

/// The tables a module's migrations produce, folded from their declared changes (`SchemaChange`), in order. What
/// `caravan migrations new` compares the declarations with.
public struct SchemaModel: Sendable, Hashable {
    public private(set) var tables: [TableSchema]

    public init(tables: [TableSchema] = []) {
        self.tables = tables
    }

    /// The schema `migrations` produce. A migration shipped as SQL only (no declared changes) cannot be folded: the
    /// error names it.
    public init(folding migrations: [Migration]) throws(CaravanError) {
        self.init()
        for migration in migrations {
            guard !migration.changes.isEmpty else {
                throw CaravanError(.invalidConfiguration, "migration \(migration.id) is SQL only (it declares no schema changes), so the schema it produces is unknown")
            }
            for change in migration.changes { try apply(change) }
        }
    }

    /// The table named `name`, or nil.
    public func table(named name: String) -> TableSchema? { tables.first { $0.name == name } }

    /// The schema after `change`; refuses a change to a table or column that is not there.
    public mutating func apply(_ change: SchemaChange) throws(CaravanError) {
        switch change {
        case .createTable(let table):
            guard self.table(named: table.name) == nil else { throw Self.error("table \(table.name) is created twice") }
            tables.append(table)
        case .addColumn(let column, let table):
            try update(table.name) { $0.changing(columns: $0.columns + [column]) }
        case .createIndex(let index, let table):
            try update(table.name) { $0.changing(indexes: $0.indexes + [index]) }
        case .createSearch(let table):
            try update(table.name) { $0.changing(search: .some(table.search)) }
        case .renameTable(let old, let new):
            try update(old) { $0.changing(name: new) }
            tables = tables.map { table in
                table.changing(foreignKeys: table.foreignKeys.map { key in
                    key.referencedTable == old ? ForeignKey(key.columns, references: new, key.referencedColumns, onDelete: key.onDelete) : key
                })
            }
        case .renameColumn(let old, let new, let name):
            try update(name) { table throws(CaravanError) in
                guard let column = table.column(named: old) else { throw Self.error("table \(name) has no column \(old) to rename") }
                return table.renamingColumn(column, to: new)
            }
            tables = tables.map { table in
                table.changing(foreignKeys: table.foreignKeys.map { key in
                    guard key.referencedTable == name else { return key }
                    return ForeignKey(key.columns, references: name, key.referencedColumns.map { $0 == old ? new : $0 }, onDelete: key.onDelete)
                })
            }
        case .dropIndex(let index, let name):
            try update(name) { $0.changing(indexes: $0.indexes.filter { $0.name != index }) }
        case .dropColumn(let column, let name):
            try update(name) { $0.changing(columns: $0.columns.filter { $0.name != column }) }
        case .dropTable(let name):
            guard self.table(named: name) != nil else { throw Self.error("table \(name) is not there to drop") }
            tables.removeAll { $0.name == name }
        }
    }

    private mutating func update(_ name: String, _ body: (TableSchema) throws(CaravanError) -> TableSchema) throws(CaravanError) {
        guard let position = tables.firstIndex(where: { $0.name == name }) else { throw Self.error("table \(name) does not exist at this point") }
        tables[position] = try body(tables[position])
    }

    private static func error(_ message: String) -> CaravanError { CaravanError(.invalidConfiguration, "migrations: " + message) }
}

extension TableSchema {
    /// This declaration with some parts replaced (everything else kept).
    func changing(name: String? = nil, columns: [Column]? = nil, foreignKeys: [ForeignKey]? = nil, indexes: [Index]? = nil,
                  search: SearchIndexes?? = nil) -> TableSchema {
        TableSchema(name ?? self.name, columns: columns ?? self.columns, primaryKey: primaryKey, uniques: uniques,
                    foreignKeys: foreignKeys ?? self.foreignKeys, checks: checks, indexes: indexes ?? self.indexes, exposure: exposure,
                    search: search ?? self.search, synced: isSynced, owner: owner, participants: participants, exportCard: exportCard)
    }

    /// This declaration with `column` called `new` in its columns, keys and indexes (what RENAME COLUMN does).
    func renamingColumn(_ column: Column, to new: String) -> TableSchema {
        let old = column.name
        func rename(_ name: String) -> String { name == old ? new : name }
        return TableSchema(
            name,
            columns: columns.map { $0.name == old ? Column(new, $0.type, nullable: $0.isNullable, default: $0.defaultValue) : $0 },
            primaryKey: primaryKey.map(rename), uniques: uniques.map { $0.map(rename) },
            foreignKeys: foreignKeys.map { ForeignKey($0.columns.map(rename), references: $0.referencedTable, $0.referencedColumns, onDelete: $0.onDelete) },
            checks: checks,
            indexes: indexes.map { Index($0.name, $0.keys.map { IndexKey(rename($0.column), descending: $0.descending) }, unique: $0.isUnique, kind: $0.kind, where: $0.predicate) },
            exposure: exposure, search: search, synced: isSynced, owner: owner.map(rename), participants: participants.map(rename),
            exportCard: exportCard?.map(rename)
        )
    }
}

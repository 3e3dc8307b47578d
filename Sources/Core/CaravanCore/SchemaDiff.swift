/// The schema changes that take the tables a module's migrations produce to the tables it declares now: what
/// `caravan migrations new` writes as the next migration. Additive changes (a table, a column that is nullable or has
/// a default, an index, a table's search) are found on their own; a rename only through a declared change
/// (`Column(…, renamedFrom:)`); a drop only through a declared removal (`SchemaRemoval`). Anything else that differs —
/// a dropped table, column or index without its removal, a changed column type, nullability or default, changed keys,
/// checks or search — is refused, every one named in the error: a migration never loses data unless the declaration
/// says so, and never changes what it cannot change on both engines.
public enum SchemaDiff {
    public static func changes(from old: [TableSchema], to new: [TableSchema], removals: [SchemaRemoval] = []) throws(CaravanError) -> [SchemaChange] {
        let working = SchemaModel(tables: old)
        var changes: [SchemaChange] = []
        var drops: [SchemaChange] = []
        var refusals: [String] = []
        let declared = Set(removals)
        let newNames = Set(new.map(\.name))

        for table in new {
            guard let before = working.table(named: table.name) else {
                changes.append(.createTable(table))
                continue
            }
            // Renames first, so that the rest compares under the new names.
            var renamed = before
            for column in table.columns where before.column(named: column.name) == nil {
                guard let from = column.renamedFrom, let source = renamed.column(named: from), table.column(named: from) == nil else { continue }
                let uses = before.checks.contains { $0.rule.columns.contains(from) } || before.indexes.contains { $0.predicate?.columns.contains(from) ?? false }
                    || (before.search.map { Self.columns(of: $0).contains(from) } ?? false)
                if uses {
                    refusals.append("renaming \(table.name).\(from) to \(column.name): a check, a partial index or the search of the table names it")
                    continue
                }
                let change = SchemaChange.renameColumn(from, to: column.name, in: table.name)
                changes.append(change)
                renamed = renamed.renamingColumn(source, to: column.name)
            }
            for column in table.columns {
                guard let existing = renamed.column(named: column.name) else {
                    if !column.isNullable && column.defaultValue == nil {
                        refusals.append("adding \(table.name).\(column.name) NOT NULL without a default: existing rows would have no value")
                    } else {
                        changes.append(.addColumn(Column(column.name, column.type, nullable: column.isNullable, default: column.defaultValue), to: table))
                    }
                    continue
                }
                if existing.type != column.type {
                    refusals.append("changing the type of \(table.name).\(column.name) from \(existing.type.postgresName) to \(column.type.postgresName) "
                                    + "(add a column of the new type and declare the old one removed)")
                } else if existing.isNullable && !column.isNullable {
                    refusals.append("narrowing \(table.name).\(column.name) to NOT NULL (existing rows may hold null)")
                } else if !existing.isNullable && column.isNullable {
                    refusals.append("making \(table.name).\(column.name) nullable (not possible in place on SQLite)")
                } else if existing.defaultValue != column.defaultValue {
                    refusals.append("changing the default of \(table.name).\(column.name) (not possible in place on SQLite)")
                }
            }
            for column in renamed.columns where table.column(named: column.name) == nil {
                if declared.contains(.column(column.name, of: table.name)) {
                    drops.append(.dropColumn(column.name, from: table.name))
                } else {
                    refusals.append("dropping \(table.name).\(column.name) (declare it with SchemaRemoval.column(\"\(column.name)\", of: \"\(table.name)\"), "
                                    + "or declare a rename with Column(…, renamedFrom: \"\(column.name)\"))")
                }
            }
            if renamed.primaryKey != table.primaryKey { refusals.append("changing the primary key of \(table.name)") }
            if Set(renamed.uniques) != Set(table.uniques) { refusals.append("changing the unique keys of \(table.name)") }
            if Set(renamed.foreignKeys) != Set(table.foreignKeys) { refusals.append("changing the foreign keys of \(table.name) (not possible in place on SQLite)") }
            if Set(renamed.checks) != Set(table.checks) { refusals.append("changing the checks of \(table.name) (not possible in place on SQLite)") }
            for index in table.indexes {
                guard let existing = renamed.indexes.first(where: { $0.name == index.name }) else {
                    changes.append(.createIndex(index, on: table))
                    continue
                }
                if existing != index {
                    refusals.append("changing the index \(index.name) of \(table.name) (add it under a new name and declare the old one removed)")
                }
            }
            for index in renamed.indexes where !table.indexes.contains(where: { $0.name == index.name }) {
                if declared.contains(.index(index.name, of: table.name)) {
                    drops.insert(.dropIndex(index.name, on: table.name), at: 0)
                } else {
                    refusals.append("dropping the index \(index.name) of \(table.name) (declare it with SchemaRemoval.index(\"\(index.name)\", of: \"\(table.name)\"))")
                }
            }
            switch (renamed.search, table.search) {
            case (nil, nil): break
            case (nil, .some): changes.append(.createSearch(table))
            case (let was?, let now?) where was == now: break
            default: refusals.append("changing the search of \(table.name)")
            }
        }
        for table in old where !newNames.contains(table.name) {
            if declared.contains(.table(table.name)) {
                drops.append(.dropTable(table.name))
            } else {
                refusals.append("dropping the table \(table.name) (declare it with SchemaRemoval.table(\"\(table.name)\"))")
            }
        }
        guard refusals.isEmpty else {
            throw CaravanError(.invalidConfiguration, "refused: " + refusals.joined(separator: "; "))
        }
        return changes + drops
    }

    private static func columns(of search: SearchIndexes) -> [String] {
        search.fullTextColumns + search.fuzzy + [search.geo?.latitude, search.geo?.longitude].compactMap { $0 }
    }
}

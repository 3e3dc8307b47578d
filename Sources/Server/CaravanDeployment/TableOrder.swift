import CaravanCore

/// Tables in dependency order: every table after the tables its foreign keys reference, otherwise in the given
/// order. Self-references and references to tables outside the list are ignored.
enum TableOrder {
    static func dependencyOrder(_ tables: [TableSchema]) throws(DeploymentError) -> [TableSchema] {
        let names = Set(tables.map(\.name))
        var placed: Set<String> = []
        var ordered: [TableSchema] = []
        var pending = tables
        while !pending.isEmpty {
            let ready = pending.filter { table in
                table.foreignKeys.allSatisfy { key in
                    key.referencedTable == table.name || !names.contains(key.referencedTable) || placed.contains(key.referencedTable)
                }
            }
            guard !ready.isEmpty else {
                throw DeploymentError(.unsupportedEngine, "the foreign keys of \(pending.map(\.name).joined(separator: ", ")) form a cycle")
            }
            for table in ready { placed.insert(table.name) }
            ordered.append(contentsOf: ready)
            pending.removeAll { placed.contains($0.name) }
        }
        return ordered
    }
}

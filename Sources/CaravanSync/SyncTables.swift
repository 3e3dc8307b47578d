import CaravanCore

/// The tables of one pull, resolved for the caller: each exposed, declared synced, and readable by the caller.
struct SyncTables: Sendable {
    struct Entry: Sendable {
        let table: TableSchema
        let visibility: RowVisibility
    }

    let names: [String]
    let entries: [Entry]
    private let byName: [String: Int]

    /// Most tables one pull may name.
    static let maximumCount = 64

    init(_ list: String?, access: AccessContext, store: any Store) throws(CaravanError) {
        guard let list, !list.isEmpty else {
            throw CaravanError(.parseError, "tables is required", hint: "Name the tables to mirror: ?tables=places,favorites")
        }
        let names = list.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
        guard names.count <= Self.maximumCount, !names.contains(where: \.isEmpty), Set(names).count == names.count else {
            throw CaravanError(.parseError, "tables must be a comma-separated list of distinct table names (at most \(Self.maximumCount))")
        }
        var entries: [Entry] = []
        for name in names {
            let table = try access.catalog.requireExposedTable(name)
            guard table.isSynced else {
                throw CaravanError(.notSynced, "The table '\(name)' is not synced", hint: "Its app module does not declare it synced")
            }
            let rule = try access.readRule(table)
            if case .constant(false) = rule {
                throw CaravanError(.permissionDenied, "permission denied for table \(name)")
            }
            entries.append(Entry(table: table, visibility: RowVisibility(table: table, rule: rule, store: store)))
        }
        self.names = names
        self.entries = entries
        self.byName = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
    }

    func entry(named name: String) -> Entry? { byName[name].map { entries[$0] } }
}

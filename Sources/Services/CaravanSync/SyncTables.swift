import CaravanCore

/// The tables of one pull, resolved for the caller: each exposed, declared synced, and readable by the caller, with
/// the caller's filter on it (a *shape*), and what its select rule reads of other tables.
struct SyncTables: Sendable {
    struct Entry: Sendable {
        let table: TableSchema
        /// The caller's select rule ANDed with the pull's filter on the table.
        let visibility: RowVisibility
        /// The other tables the rule reads, and how their rows link to this table's rows.
        let dependencies: [PolicyDependency]
    }

    let names: [String]
    let entries: [Entry]
    /// The pulled tables, then every other table a pulled table's rule reads: the change log is read for all of them.
    let logTables: [String]
    /// The pull's filters in a canonical spelling (part of the cursor's scope).
    let shape: String
    private let byName: [String: Int]

    /// Most tables one pull may name.
    static let maximumCount = 64

    /// `list` names the tables; `filters` are the pull's `<table>.<column>=<op>.<value>` (and `<table>.or=(…)`)
    /// parameters, in the REST filter grammar.
    init(_ list: String?, filters: [QueryString.Pair] = [], access: AccessContext, store: any Store) throws(CaravanError) {
        guard let list, !list.isEmpty else {
            throw CaravanError(.parseError, "tables is required", hint: "Name the tables to mirror: ?tables=places,favorites")
        }
        let names = list.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
        guard names.count <= Self.maximumCount, !names.contains(where: \.isEmpty), Set(names).count == names.count else {
            throw CaravanError(.parseError, "tables must be a comma-separated list of distinct table names (at most \(Self.maximumCount))")
        }
        let shapes = try Self.shapes(filters, tables: names)
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
            var visible = rule
            if let filter = shapes[name] { visible = .both(rule, try filter.bound(to: table)) }
            entries.append(Entry(table: table, visibility: RowVisibility(table: table, rule: visible, store: store),
                                 dependencies: PolicyDependency.of(visible)))
        }
        self.names = names
        self.entries = entries
        let read = Set(entries.flatMap { $0.dependencies.map(\.table.name) })
        self.logTables = names + read.subtracting(names).sorted()
        self.shape = filters.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "&")
        self.byName = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
    }

    func entry(named name: String) -> Entry? { byName[name].map { entries[$0] } }

    /// The filter of each table named by `filters` (`places.area_id=eq.olaya` filters `places`).
    private static func shapes(_ filters: [QueryString.Pair], tables: [String]) throws(CaravanError) -> [String: Predicate] {
        guard !filters.isEmpty else { return [:] }
        let query = try QueryParser.parseRead(QueryString(pairs: filters))
        var shapes: [String: Predicate] = [:]
        for (path, embedded) in query.embedded {
            guard tables.contains(path) else {
                throw CaravanError(.parseError, "The filter names '\(path)', which this pull does not mirror",
                                   hint: "Filter a pulled table: ?tables=places&places.area_id=eq.olaya")
            }
            guard embedded.select == [.star], embedded.order.isEmpty, embedded.limit == nil, embedded.offset == nil, embedded.embedded.isEmpty else {
                throw CaravanError(.parseError, "A pull takes only filters on its tables (no select, order, limit or offset)",
                                   hint: "Filter a pulled table: ?tables=places&places.area_id=eq.olaya")
            }
            shapes[path] = embedded.filter
        }
        return shapes
    }
}

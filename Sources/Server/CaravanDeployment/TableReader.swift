import CaravanCore

/// Reads every row of a table through the storage port, in primary-key order, one page at a time (keyset paging:
/// each page starts after the last key of the one before, so a page costs the same wherever it is).
struct TableReader {
    let fetch: @Sendable (ReadPlan) async throws -> ReadResult
    let table: TableSchema
    let pageSize: Int

    init(store: any Store, table: TableSchema, pageSize: Int) {
        self.init(fetch: { try await store.fetch($0) }, table: table, pageSize: pageSize)
    }

    /// Reads inside `snapshot`: every page comes from the same state of the database.
    init(snapshot: any SnapshotReader, table: TableSchema, pageSize: Int) {
        self.init(fetch: { try await snapshot.fetch($0) }, table: table, pageSize: pageSize)
    }

    init(fetch: @escaping @Sendable (ReadPlan) async throws -> ReadResult, table: TableSchema, pageSize: Int) {
        self.fetch = fetch
        self.table = table
        self.pageSize = pageSize
    }

    /// Calls `body` with each page of full rows (every column, in table order) until the table is exhausted.
    func forEachPage(_ body: ([[Value]]) async throws -> Void) async throws {
        let keyColumns = try table.primaryKey.map { try table.requireColumn($0) }
        let keyPositions = table.primaryKey.compactMap { table.position(of: $0) }
        var after: [Value]?
        while true {
            let access = after.map { Self.after($0, columns: keyColumns) } ?? .constant(true)
            let plan = try ReadPlan(table: table, query: Query(limit: pageSize), access: access, maxRows: nil, includeCount: false)
            let rows = try await fetch(plan).rows
            if !rows.isEmpty { try await body(rows) }
            guard rows.count == pageSize, let last = rows.last else { return }
            after = keyPositions.map { last[$0] }
        }
    }

    /// Rows whose key comes after `key`: `(a > x) OR (a = x AND b > y) OR …`.
    static func after(_ key: [Value], columns: [Column]) -> BoundPredicate {
        var branches: [BoundPredicate] = []
        for i in columns.indices {
            var terms: [BoundPredicate] = (0..<i).map { .compare(columns[$0], .eq, key[$0]) }
            terms.append(.compare(columns[i], .gt, key[i]))
            branches.append(terms.count == 1 ? terms[0] : .and(terms))
        }
        return branches.count == 1 ? branches[0] : .or(branches)
    }
}

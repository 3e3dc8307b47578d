import CaravanCore

/// The rows that visibility changes in one page of the change log moved into or out of the caller's view
/// (wire-protocol §6.1, "moves through another table").
///
/// A logged change to a table that a pulled table's select rule reads (a membership, a block) concerns the caller when
/// its old or new row satisfies the subquery's own conditions for the caller; the guarded rows it may have moved are
/// those whose linked columns equal that row's values (a *slice*). For each slice the page carries, at the position of
/// the last change that touched it: an `evict` of the slice when rows may have left the view, then every row of the
/// slice the caller sees now, as upserts. So the work follows the rows that moved, and a caller whom no change
/// concerns pays only the in-memory checks. Slices whose rows the caller could never see (the rest of the rule fails on
/// the slice's values, whatever the subqueries answer) are skipped without a read.
struct VisibilityMoves {
    struct Move {
        let entry: SyncTables.Entry
        let slice: MoveSlice
    }

    /// The moves to send after the change at each position of the page.
    private var byPosition: [Int: [Move]] = [:]
    /// Each guarded table's moved slices, with the position they are sent at.
    private var slicesByTable: [String: [(fixed: [MoveSlice.Fixed], position: Int)]] = [:]

    init(_ changes: [Change], tables: SyncTables) throws(CaravanError) {
        struct Key: Hashable {
            let table: String
            let fixed: [MoveSlice.Fixed]
        }
        var last: [Key: (position: Int, movesOut: Bool, entry: SyncTables.Entry)] = [:]
        var order: [Key] = []
        for (position, change) in changes.enumerated() {
            for entry in tables.entries {
                for dependency in entry.dependencies where dependency.table.name == change.table {
                    for slice in try Self.slices(of: change, dependency: dependency) {
                        guard entry.visibility.rule.couldHold(fixing: slice.values) else { continue }
                        let key = Key(table: entry.table.name, fixed: slice.fixed)
                        if last[key] == nil { order.append(key) }
                        last[key] = (position, (last[key]?.movesOut ?? false) || slice.movesOut, entry)
                    }
                }
            }
        }
        for key in order {
            guard let found = last[key] else { continue }
            byPosition[found.position, default: []].append(Move(entry: found.entry, slice: MoveSlice(fixed: key.fixed, movesOut: found.movesOut)))
            slicesByTable[key.table, default: []].append((key.fixed, found.position))
        }
    }

    /// Whether a move sent at `position` or later in this page carries the row of `table` with `new` values as it is
    /// now (if the caller sees it), and the row had the same values on the slice's columns before (`old`; nil for an
    /// insert): then the logged upsert at `position` says nothing the move does not, and is left out. A logged
    /// delete is never left out.
    func supersedes(upsertIn table: String, at position: Int, old: [String: Value]?, new: [String: Value]) -> Bool {
        guard let slices = slicesByTable[table] else { return false }
        return slices.contains { slice in
            slice.position >= position && slice.fixed.allSatisfy { fixed in
                new[fixed.column] == fixed.value && (old.map { $0[fixed.column] == fixed.value } ?? true)
            }
        }
    }

    var isEmpty: Bool { byPosition.isEmpty }

    /// The slices a logged change of a dependency's table touches.
    static func slices(of change: Change, dependency: PolicyDependency) throws(CaravanError) -> [MoveSlice] {
        func lookup(_ json: String?) throws(CaravanError) -> ((String) -> Value)? {
            guard let json else { return nil }
            let values = try RowVisibility.values(of: json, in: dependency.table)
            return { values[$0] ?? .null }
        }
        return dependency.slices(old: try lookup(change.oldRecord), new: change.operation == .delete ? nil : try lookup(change.record))
    }

    /// The evictions and upserts to send after the change at `position`, stamped with its `seq`.
    func rows(at position: Int, seq: Int64, store: any Store) async throws -> [PulledChange] {
        guard let moves = byPosition[position] else { return [] }
        var out: [PulledChange] = []
        for move in moves {
            let table = move.entry.table
            var conditions: [BoundPredicate] = []
            for fixed in move.slice.fixed {
                conditions.append(.compare(try table.requireColumn(fixed.column), .eq, fixed.value))
            }
            if move.slice.movesOut {
                let names = move.slice.fixed.map(\.column)
                out.append(PulledChange(seq: seq, table: table.name, operation: .evict, key: .values(move.slice.fixed.map(\.value), names: names), record: nil))
            }
            let access = BoundPredicate.both(move.entry.visibility.rule, .and(conditions))
            let plan = try ReadPlan(table: table, query: Query(), access: access, maxRows: nil, includeCount: false)
            let result = try await store.fetch(plan)
            let names = table.columns.map(\.name)
            let keyPositions = table.primaryKey.compactMap { table.position(of: $0) }
            for row in result.rows {
                out.append(PulledChange(seq: seq, table: table.name, operation: .upsert,
                                        key: .values(keyPositions.map { row[$0] }, names: table.primaryKey), record: .values(row, names: names)))
            }
        }
        return out
    }
}

package import CaravanCore

/// One change of a pull reply, as the caller sees it.
package struct PulledChange: Sendable {
    /// `evict`: drop every local row of the table whose columns have the values of `key` (a visibility change may
    /// have taken them out of view); the rows still visible follow as upserts in the same page.
    package enum Operation: String, Sendable { case upsert, delete, evict }

    /// A JSON object: logged JSON text, or a row's values under column names (written straight into the reply).
    package enum Object: Sendable {
        case text(String)
        case values([Value], names: [String])

        func write(to writer: inout JSONWriter) {
            switch self {
            case .text(let text): writer.writeRaw(text)
            case .values(let values, let names): SyncPuller.writeObject(values, names: names, to: &writer)
            }
        }

        var text: String {
            var writer = JSONWriter()
            write(to: &writer)
            return writer.string
        }
    }

    package let seq: Int64
    package let table: String
    package let operation: Operation
    /// The primary key as a JSON object; for `evict`, the columns and values of the rows to drop (`where` on the wire).
    package let key: Object
    /// The whole row as a JSON object (upserts only).
    package let record: Object?

    /// The primary key as JSON text.
    package var keyJSON: String { key.text }
    /// The record as JSON text.
    package var recordJSON: String? { record?.text }
}

/// A pull reply: the changes, the cursor to continue from, and whether more are waiting.
package struct PullPage: Sendable {
    package let changes: [PulledChange]
    package let cursor: SyncCursor
    package let hasMore: Bool
    /// The tables this reply began to snapshot again (`refetch=`), for the client to know the server did.
    package let refetched: [String]

    package init(changes: [PulledChange], cursor: SyncCursor, hasMore: Bool, refetched: [String] = []) {
        self.changes = changes
        self.cursor = cursor
        self.hasMore = hasMore
        self.refetched = refetched
    }

    /// `{"changes":[…],"cursor":"…","has_more":…}`, and `"refetched":[…]` after `refetch=` (wire-protocol §6.1).
    package var json: [UInt8] {
        var writer = JSONWriter(reservingCapacity: 256 + changes.count * 1024)
        writer.writeRaw(#"{"changes":["#)
        for (i, change) in changes.enumerated() {
            if i > 0 { writer.writeRaw(",") }
            writer.writeRaw(#"{"seq":"#)
            writer.writeRaw(String(change.seq))
            writer.writeRaw(#","table":"#)
            writer.writeString(change.table)
            writer.writeRaw(#","op":""#)
            writer.writeRaw(change.operation.rawValue)
            writer.writeRaw(change.operation == .evict ? #"","where":"# : #"","key":"#)
            change.key.write(to: &writer)
            if let record = change.record {
                writer.writeRaw(#","record":"#)
                record.write(to: &writer)
            }
            writer.writeRaw("}")
        }
        writer.writeRaw(#"],"cursor":"#)
        writer.writeString(cursor.encoded)
        writer.writeRaw(#","has_more":"#)
        writer.writeRaw(hasMore ? "true" : "false")
        if !refetched.isEmpty {
            writer.writeRaw(#","refetched":["#)
            for (i, table) in refetched.enumerated() {
                if i > 0 { writer.writeRaw(",") }
                writer.writeString(table)
            }
            writer.writeRaw("]")
        }
        writer.writeRaw("}")
        return writer.bytes
    }
}

/// `/sync/v1/pull`: the initial snapshot of the caller's visible rows, then the change log after it, through the
/// caller's select policies (wire-protocol §6.1).
///
/// The snapshot is paged by primary key; each page is read when it is asked for, under the caller's read rule. It
/// starts at the log's head `start`, and the log is followed from `start` once the last table is paged, so no change
/// is missed between the two. A change committed while a snapshot is being paged may arrive twice (in a later
/// snapshot page and again from the log); upserts of whole rows make that harmless, and the replica equals the
/// server's visible rows once `has_more` is false.
package struct SyncPuller: Sendable {
    package let store: any Store
    package let catalog: Catalog

    package static let defaultLimit = 1_000
    package static let maximumLimit = 10_000

    package init(store: any Store, catalog: Catalog) {
        self.store = store
        self.catalog = catalog
    }

    /// `filters` are the pull's shapes: `<table>.<column>=<op>.<value>` (and `<table>.or=(…)`) pairs in the REST filter
    /// grammar; the cursor is bound to them. `refetch` (comma-separated, from `refetch=`) names pulled tables to
    /// snapshot again from a cursor following the log — those whose sync epoch was raised since it was made —
    /// while the other tables go on from where the cursor stands.
    package func pull(as identity: Identity, tables list: String?, filters: [QueryString.Pair] = [], cursor text: String?, refetch refetchList: String? = nil,
                      limit: Int?) async throws -> PullPage {
        let access = catalog.access(for: identity)
        let tables = try SyncTables(list, filters: filters, access: access, store: store)
        let limit = min(max(limit ?? Self.defaultLimit, 1), Self.maximumLimit)
        let state = try await store.changeLogState()
        let scope = SyncCursor.scope(of: identity, tables: tables.names, shape: tables.shape)
        let epochs = tables.names.map { catalog.syncEpoch(of: $0) }
        var position: SyncCursor.Position
        var refetch: SyncCursor.Refetch?
        var refetched: [String] = []
        if let text {
            let cursor = try Self.validated(try SyncCursor.decode(text), state: state, scope: scope, tables: tables)
            position = cursor.position
            refetch = cursor.refetch
            let stale = tables.names.indices.filter { cursor.tableEpoch($0) != epochs[$0] }
            let asked = try Self.refetchIndices(refetchList, tables: tables)
            if !stale.isEmpty || !asked.isEmpty {
                // One table at a time only from a cursor following the log with no refetch under way; else all anew.
                guard case .log(let seq) = position, refetch == nil else {
                    let message = stale.isEmpty ? "refetch applies to a cursor that follows the log"
                        : "The sync epoch of \(stale.map { tables.names[$0] }.joined(separator: ", ")) changed during a snapshot"
                    throw CaravanError(.mustRefetch, message, hint: "Pull again without a cursor")
                }
                guard Set(stale).isSubset(of: asked) else {
                    let names = stale.map { tables.names[$0] }.joined(separator: ",")
                    throw CaravanError(.mustRefetch, "The sync epoch of \(names) changed (a breaking change on the server)",
                                       details: "tables=" + names, hint: "Pull again with this cursor and refetch=\(names)")
                }
                refetch = SyncCursor.Refetch(tables: asked, through: state.head)
                refetched = asked.map { tables.names[$0] }
                position = .snapshot(start: seq, table: asked[0], lastKey: nil)
            }
        } else {
            position = .snapshot(start: state.head, table: 0, lastKey: nil)
        }
        func cursor(_ position: SyncCursor.Position, _ refetch: SyncCursor.Refetch?) -> SyncCursor {
            SyncCursor(epoch: state.epoch, scope: scope, position: position, tableEpochs: epochs, refetch: refetch)
        }
        var changes: [PulledChange] = []
        // Snapshot pages may come from a read replica, one that has replayed the primary's position as of now: every
        // change up to the snapshot's start (settled before this) is in them, as on the primary.
        var snapshotRouting: ReadRouting?
        while case .snapshot(let start, let index, let lastKey) = position {
            let room = limit - changes.count
            guard room > 0 else { return PullPage(changes: try RenamedColumns.aliased(changes, catalog: catalog), cursor: cursor(position, refetch), hasMore: true, refetched: refetched) }
            let entry = tables.entries[index]
            if snapshotRouting == nil { snapshotRouting = try await store.currentRouting() }
            let routing = snapshotRouting ?? .primary
            let (page, pageLastKey) = try await snapshotPage(entry, after: lastKey, limit: room, start: refetch?.through ?? start, routing: routing)
            changes += page
            if page.count == room {
                position = .snapshot(start: start, table: index, lastKey: pageLastKey)
            } else if let next = refetch.map({ $0.tables.first { $0 > index } }) ?? (index + 1 < tables.entries.count ? index + 1 : nil) {
                position = .snapshot(start: start, table: next, lastKey: nil)
            } else {
                position = .log(seq: start)
            }
        }
        guard case .log(let seq) = position else { throw CaravanError(.internalFailure, "pull ended outside the log") }
        let room = max(limit - changes.count, 1)
        let page = try await store.changeLogPage(after: seq, tables: tables.logTables, limit: room)
        let moves = try VisibilityMoves(page.changes, tables: tables)
        // Each logged row is parsed once; the subqueries all rows ask are answered together, before any is decided.
        let logged = try page.changes.map { change in try tables.entry(named: change.table).map { try LoggedRows(change, in: $0.table) } }
        var questions: Set<SubqueryAnswers.Question> = []
        for (change, rows) in zip(page.changes, logged) {
            guard let rows, let entry = tables.entry(named: change.table) else { continue }
            for values in [rows.old, rows.new].compactMap({ $0 }) { questions.formUnion(entry.visibility.questions(about: values)) }
        }
        var answers = SubqueryAnswers()
        try await answers.answer(questions, store: store)
        var missing = MissingColumns()
        // A re-snapshotted table's entries up to the refetch's start: the snapshot holds their outcome.
        let snapshotted = Set(refetch?.tables.map { tables.names[$0] } ?? [])
        func keep(_ pulled: [PulledChange]) -> [PulledChange] {
            guard let refetch, !snapshotted.isEmpty else { return pulled }
            return pulled.filter { !($0.seq <= refetch.through && snapshotted.contains($0.table)) }
        }
        for (position, change) in page.changes.enumerated() {
            if let entry = tables.entry(named: change.table), let rows = logged[position] {
                let pulled = try await Self.pulled(change, rows, entry: entry, answers: &answers)
                // A lone upsert a later move of this page sends again, as the row is now, is left out.
                let superseded = pulled.count == 1 && pulled[0].operation == .upsert
                    && rows.new.map { moves.supersedes(upsertIn: change.table, at: position, old: rows.old, new: $0) } == true
                if !superseded {
                    for pulledChange in keep(pulled) {
                        missing.note(pulledChange, at: changes.count, values: rows.new, table: entry.table)
                        changes.append(pulledChange)
                    }
                }
            }
            changes += keep(try await moves.rows(at: position, seq: change.seq, store: store))
        }
        changes = try await missing.filled(changes, tables: tables, store: store)
        let next = page.reachedLimit ? (page.changes.last?.seq ?? seq) : max(seq, page.head)
        if let current = refetch, next >= current.through { refetch = nil }
        return PullPage(changes: try RenamedColumns.aliased(changes, catalog: catalog), cursor: cursor(.log(seq: next), refetch), hasMore: page.reachedLimit, refetched: refetched)
    }

    /// The pulled tables `list` names (`refetch=`), as ascending indices; every name must be one of the pull's tables.
    static func refetchIndices(_ list: String?, tables: SyncTables) throws(CaravanError) -> [Int] {
        guard let list, !list.isEmpty else { return [] }
        var indices: Set<Int> = []
        for name in list.split(separator: ",", omittingEmptySubsequences: false).map({ String($0).trimmingSpaces }) {
            guard let index = tables.names.firstIndex(of: name) else {
                throw CaravanError(.parseError, "refetch names '\(name)', which this pull does not mirror",
                                   hint: "Name pulled tables: ?tables=places,favorites&refetch=places")
            }
            indices.insert(index)
        }
        return indices.sorted()
    }

    /// A cursor this deployment can continue from, or `mustRefetch`.
    static func validated(_ cursor: SyncCursor, state: ChangeLogState, scope: UInt64, tables: SyncTables) throws(CaravanError) -> SyncCursor {
        guard cursor.epoch == state.epoch else {
            throw CaravanError(.mustRefetch, "The sync cursor belongs to another history of this deployment", hint: "Pull again without a cursor")
        }
        guard cursor.scope == scope else {
            throw CaravanError(.mustRefetch, "The sync cursor was made for another caller or other tables", hint: "Pull again without a cursor")
        }
        guard cursor.logSeq >= state.compactedThrough else {
            throw CaravanError(.mustRefetch, "The change log after this cursor has been compacted", hint: "Pull again without a cursor")
        }
        guard cursor.logSeq <= state.head else { throw SyncCursor.malformed }
        if let refetch = cursor.refetch {
            guard refetch.through <= state.head, refetch.through >= cursor.logSeq, refetch.tables.allSatisfy({ $0 < tables.entries.count }) else {
                throw SyncCursor.malformed
            }
            if case .snapshot(_, let index, _) = cursor.position, !refetch.tables.contains(index) { throw SyncCursor.malformed }
        }
        guard cursor.tableEpochs.isEmpty || cursor.tableEpochs.count == tables.entries.count else { throw SyncCursor.malformed }
        if case .snapshot(_, let index, let lastKey) = cursor.position {
            guard index < tables.entries.count, lastKey.map({ $0.count == tables.entries[index].table.primaryKey.count }) ?? true else {
                throw SyncCursor.malformed
            }
        }
        return cursor
    }

    /// Up to `limit` visible rows of `entry`'s table after `lastKey`, by primary key, and the page's last key.
    private func snapshotPage(_ entry: SyncTables.Entry, after lastKey: [JSONValue]?, limit: Int, start: Int64,
                              routing: ReadRouting) async throws -> ([PulledChange], [JSONValue]?) {
        let table = entry.table
        let keyColumns = try table.primaryKey.map { try table.requireColumn($0) }
        var access = entry.visibility.rule
        if let lastKey {
            access = .both(access, try Self.after(lastKey, columns: keyColumns))
        }
        let plan = try ReadPlan(table: table, query: Query(limit: limit), access: access, maxRows: nil, includeCount: false)
        let result = try await store.routedFetch(plan, routing: routing)
        let names = table.columns.map(\.name)
        let keyPositions = table.primaryKey.compactMap { table.position(of: $0) }
        let changes = result.rows.map { row in
            PulledChange(seq: start, table: table.name, operation: .upsert,
                         key: .values(keyPositions.map { row[$0] }, names: table.primaryKey), record: .values(row, names: names))
        }
        let last = result.rows.last.map { row in keyPositions.map { JSONValue(row[$0]) } }
        return (changes, last)
    }

    /// Rows whose key sorts after `key`: `(a > x) OR (a = x AND b > y) …`.
    static func after(_ key: [JSONValue], columns: [Column]) throws(CaravanError) -> BoundPredicate {
        var values: [Value] = []
        for (column, json) in zip(columns, key) {
            do {
                values.append(try column.type.value(fromJSON: json))
            } catch {
                throw SyncCursor.malformed
            }
        }
        var terms: [BoundPredicate] = []
        for i in columns.indices {
            let equal = (0..<i).map { BoundPredicate.compare(columns[$0], .eq, values[$0]) }
            terms.append(.and(equal + [.compare(columns[i], .gt, values[i])]))
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    static func object(_ values: [Value], names: [String]) -> String {
        var writer = JSONWriter()
        writeObject(values, names: names, to: &writer)
        return writer.string
    }

    static func writeObject(_ values: [Value], names: [String], to writer: inout JSONWriter) {
        writer.writeRaw("{")
        for (i, (name, value)) in zip(names, values).enumerated() {
            if i > 0 { writer.writeRaw(",") }
            writer.writeString(name)
            writer.writeRaw(":")
            writer.write(value)
        }
        writer.writeRaw("}")
    }

    /// A logged change's old and new rows as column values (the new one absent for a delete).
    struct LoggedRows {
        let old: [String: Value]?
        let new: [String: Value]?

        init(_ change: Change, in table: TableSchema) throws(CaravanError) {
            old = try change.oldRecord.map { json throws(CaravanError) in try RowVisibility.values(of: json, in: table) }
            new = change.operation == .delete ? nil : try change.record.map { json throws(CaravanError) in try RowVisibility.values(of: json, in: table) }
        }
    }

    /// Whether two keys (JSON text) name one row: a key logged before a rename of a key column says the old name.
    static func sameKey(_ one: String, _ other: String, table: TableSchema) throws(CaravanError) -> Bool {
        let renamed = RenamedColumns(table)
        return renamed.canonicalKey(try JSONParser.parse(one)) == renamed.canonicalKey(try JSONParser.parse(other))
    }

    /// What a logged change is to the caller: an upsert of a visible row, a delete of a row that was visible and
    /// no longer is (deleted, moved out of view, or re-keyed), or nothing.
    static func pulled(_ change: Change, _ rows: LoggedRows, entry: SyncTables.Entry, answers: inout SubqueryAnswers) async throws -> [PulledChange] {
        let visibility = entry.visibility
        var oldVisible = false
        if let old = rows.old { oldVisible = try await visibility.admits(old, answers: &answers) }
        let oldKey = rows.old.map { old in object(entry.table.primaryKey.map { old[$0] ?? .null }, names: entry.table.primaryKey) }
        if let new = rows.new, let record = change.record, try await visibility.admits(new, answers: &answers) {
            var out: [PulledChange] = []
            if oldVisible, let oldKey, oldKey != change.primaryKey, try !Self.sameKey(oldKey, change.primaryKey, table: entry.table) {
                out.append(PulledChange(seq: change.seq, table: change.table, operation: .delete, key: .text(oldKey), record: nil))
            }
            out.append(PulledChange(seq: change.seq, table: change.table, operation: .upsert, key: .text(change.primaryKey), record: .text(record)))
            return out
        }
        guard oldVisible, let oldKey else { return [] }
        return [PulledChange(seq: change.seq, table: change.table, operation: .delete, key: .text(oldKey), record: nil)]
    }
}

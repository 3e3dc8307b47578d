import CaravanClientSQLite
import CaravanCore
import Foundation

extension LocalStore {
    /// The next pending mutations to push, at most `limit`: higher priority first, but a row's writes never
    /// overtake each other (a write is sent at the highest priority of its row's later writes).
    func pendingBatch(limit: Int) throws -> [OutboxEntry] {
        let pending = try read { try $0.pendingOutbox() }.map(OutboxEntry.init)
        var effective: [String: MutationPriority] = [:]
        for entry in pending.reversed() {
            let row = entry.table + "\u{1}" + entry.rowKey
            effective[row] = max(effective[row] ?? .low, entry.priority)
        }
        let ordered = pending.enumerated().sorted { a, b in
            let pa = effective[a.element.table + "\u{1}" + a.element.rowKey] ?? a.element.priority
            let pb = effective[b.element.table + "\u{1}" + b.element.rowKey] ?? b.element.priority
            return pa != pb ? pa > pb : a.offset < b.offset
        }
        return Array(ordered.prefix(limit).map(\.element))
    }

    /// Records the server's verdicts: applied entries are kept as acknowledged (with their checkpoint) until a
    /// pull has caught up with them; rejected ones are parked with their error. In the same transaction, the rows in
    /// `restoring` (those of rejected or unconfirmed writes, read from the server after the verdicts came) go back to
    /// the server's copy, so a crash in between leaves the mutations pending: pushed again, answered by replay, read
    /// back again.
    func record(_ verdicts: [PushVerdict], restoring: [(table: TableSchema, rowKey: String, serverRow: JSONValue?)] = []) throws {
        try write { transaction in
            for verdict in verdicts {
                switch verdict.status {
                case .applied(let seq): try transaction.markAcknowledged(verdict.id, checkpoint: seq)
                case .rejected(let code, let message): try transaction.park(verdict.id, code: code, message: message)
                }
            }
            for row in restoring {
                try Self.restore(row.table, rowKey: row.rowKey, serverRow: row.serverRow, in: transaction)
            }
        }
    }

    func countAttempt(_ ids: [String]) throws {
        try write { transaction in
            for id in ids { try transaction.countAttempt(id) }
        }
    }

    /// Puts back the server's copy of a row whose write was rejected or unconfirmed (nil: the server has none or
    /// hides it), unless later local writes of that row are still waiting.
    private static func restore(_ table: TableSchema, rowKey: String, serverRow: JSONValue?, in transaction: LocalTransaction) throws {
        guard try transaction.outboxCount(table: table.name, rowKey: rowKey, states: ["pending"]) == 0 else { return }
        try transaction.clearEvicted(table: table.name, rowKey: rowKey)
        if let serverRow {
            try transaction.writeRow(.object(table.columns.map { ($0.name, serverRow[$0.name] ?? .null) }), into: table, replacing: true)
        } else {
            try transaction.deleteRow(table, rowKey: rowKey)
        }
    }

    /// Applies pulled changes (the pages of one pull, or live changes: no cursor) and saves the cursor, in one
    /// transaction, so that a reader — a live query — sees all of them or none. A row with a pending local write keeps
    /// its optimistic state; a row with an acknowledged write ignores pulled state older than the write's checkpoint.
    /// `refetching` (after a 409 must-refetch) first drops the scope's rows and cursor, in the same transaction;
    /// `refetchingTables` (pulled anew alone) drops those tables' rows. Either way their marks to be pulled again go.
    /// Returns how many changes were applied.
    package func apply(_ reply: PullReply, scope: [String], filters: [SyncFilter] = [], refetching: Bool = false,
                       refetchingTables: Set<String> = [], now: Int64, beforeCommit: (@Sendable () throws -> Void)? = nil) throws -> Int {
        try write { transaction in
            if refetching {
                try resetForRefetch(scope: scope, filters: filters, in: transaction)
                try transaction.clearRefetch(Set(scope))
            } else if !refetchingTables.isEmpty {
                try dropRows(of: scope.filter(refetchingTables.contains), in: transaction)
                try transaction.clearRefetch(refetchingTables)
            }
            var guarded: [String: Int64] = [:]   // table + row key → the newest seq that must not be overwritten by older state
            for guardRow in try transaction.writeGuards() {
                let id = guardRow.table + "\u{1}" + guardRow.rowKey
                let limit: Int64 = guardRow.pending ? .max : (guardRow.checkpoint ?? .max)
                guarded[id] = max(guarded[id] ?? 0, limit)
            }
            let timed = Set(caches.compactMap { rule -> String? in if case .timeToLive(let table, _) = rule { table } else { nil } })
            // Rows evicted while a write of theirs waited, by table + row key: the seq of the eviction.
            var evicted: [String: Int64] = [:]
            for mark in try transaction.evictedRows() { evicted[mark.table + "\u{1}" + mark.rowKey] = mark.seq }
            var applied = 0
            var writers: [String: LocalTransaction.RowWriter] = [:]   // the prepared statement of each table's decoded rows
            /// Whether pulled state at `seq` must not overwrite the row: a write is waiting, or was acknowledged later.
            func isGuarded(_ table: String, _ key: String, at seq: Int64) -> Bool {
                guard let checkpoint = guarded[table + "\u{1}" + key] else { return false }
                return seq < checkpoint || checkpoint == .max
            }
            for change in reply.changes {
                guard let table = tables[change.table] else { continue }
                // The row key is only needed where a local write guards the row, or a time-to-live tracks it.
                if change.operation == .evict {
                    for key in try transaction.rowKeys(table, matching: change.key) {
                        // A row with a write still waiting stays until its verdict (a rejection restores the server's copy).
                        if isGuarded(table.name, key, at: change.seq) {
                            // Once the write is settled the row leaves, unless the server sends it again first.
                            try transaction.markEvicted(table: table.name, rowKey: key, seq: change.seq)
                            evicted[table.name + "\u{1}" + key] = change.seq
                            continue
                        }
                        try transaction.deleteRow(table, rowKey: key)
                    }
                    applied += 1
                    continue
                }
                var rowKey: String?
                if !guarded.isEmpty || !evicted.isEmpty || timed.contains(table.name) || change.operation == .delete {
                    guard let key = table.keyText(of: change.key) else { continue }
                    rowKey = key
                    // The server sent the row (or its deletion) after evicting it: it decides again.
                    if let seq = evicted[table.name + "\u{1}" + key], change.seq > seq {
                        try transaction.clearEvicted(table: table.name, rowKey: key)
                        evicted[table.name + "\u{1}" + key] = nil
                    }
                    if isGuarded(table.name, key, at: change.seq) { continue }
                }
                switch change.operation {
                case .upsert:
                    if let values = change.values {
                        let writer = try writers[table.name] ?? transaction.rowWriter(table)
                        writers[table.name] = writer
                        try writer.write(values)
                    } else {
                        guard let record = change.record else { continue }
                        try transaction.writeRow(record, into: table, replacing: true)
                    }
                    if let rowKey, timed.contains(table.name) { try transaction.markFetched(table: table.name, rowKey: rowKey, now: now) }
                case .delete:
                    guard let rowKey else { continue }
                    try transaction.deleteRow(table, rowKey: rowKey)
                case .evict:
                    continue
                }
                applied += 1
            }
            if !evicted.isEmpty { try removeSettledEvictions(transaction) }
            if let cursor = reply.cursor { try transaction.saveCursor(cursor, scope: Self.scope(scope, filters)) }
            try beforeCommit?()
            return applied
        }
    }

    /// After a pull that began once `ids` were acknowledged has caught up: those writes are in the pulled state.
    func forgetAcknowledged(_ ids: [String], scope: [String], filters: [SyncFilter] = [], syncedAt: String, durationMilliseconds: Int64) throws {
        try write { transaction in
            for id in ids { try transaction.forgetAcknowledged(id) }
            try removeSettledEvictions(transaction)
            try transaction.recordSync(scope: Self.scope(scope, filters), at: syncedAt, durationMilliseconds: durationMilliseconds)
        }
    }

    /// Rows evicted while a write of theirs waited, whose writes are now settled and which the server has not sent
    /// again since: they leave (the server applied the write but the row stays out of the caller's view).
    private func removeSettledEvictions(_ transaction: LocalTransaction) throws {
        for row in try transaction.takeSettledEvictions() {
            guard let table = tables[row.table] else { continue }
            try transaction.deleteRow(table, rowKey: row.rowKey)
        }
    }

    /// The tables whose declaration changed since their rows were pulled: the next pull of each takes it anew.
    func tablesToRefetch() throws -> Set<String> {
        try read { try $0.tablesToRefetch() }
    }

    func acknowledgedIDs() throws -> [String] {
        try read { try $0.acknowledgedIDs() }
    }

    /// 409 must-refetch: forget the cursor and the rows of `scope` (but rows with writes still waiting), so that the
    /// snapshot pulled next is the whole state.
    private func resetForRefetch(scope: [String], filters: [SyncFilter], in transaction: LocalTransaction) throws {
        try transaction.forgetScope(Self.scope(scope, filters))
        try dropRows(of: scope, in: transaction)
    }

    /// Drops the rows of `tables` but those with writes waiting or acknowledged (a snapshot of them follows). Every
    /// other scope mirroring one of them starts over too: its cursor goes on from the log, which would never send the
    /// dropped rows again.
    private func dropRows(of names: [String], in transaction: LocalTransaction) throws {
        let dropped = Set(names)
        for other in try transaction.syncedScopes() where !dropped.isDisjoint(with: Self.tables(ofScope: other)) {
            try transaction.forgetScope(other)
        }
        for name in names {
            guard let table = tables[name] else { continue }
            let keep = try transaction.outboxRowKeys(table: name, states: ["pending", "acked"])
            for key in try transaction.rowKeys(table) where !keep.contains(key) {
                try transaction.deleteRow(table, rowKey: key)
            }
        }
    }
}

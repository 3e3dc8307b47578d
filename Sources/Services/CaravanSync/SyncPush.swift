package import CaravanCore

/// The verdict on one pushed mutation.
package struct MutationResult: Sendable, Hashable {
    package enum Status: Sendable, Hashable {
        /// Applied; `seq` is its write checkpoint (its last change-log entry, or the log's head when it changed nothing).
        case applied(seq: Int64)
        /// Refused for good; the wire error (`{code, message, details, hint}`) the equivalent REST write gives.
        case rejected(error: JSONValue)
    }

    package let id: String
    package let status: Status
    /// Answered from the stored verdict of an earlier push.
    package let replayed: Bool
    /// False when an applied mutation changed no row (an update or delete of a row gone, or hidden from the writer
    /// by a write policy): the client then reads the row back, since no pulled change will correct its copy.
    package var changed = true

    package var json: JSONValue {
        var pairs: [(key: String, value: JSONValue)] = [("id", .string(id))]
        switch status {
        case .applied(let seq): pairs += [("status", .string("applied")), ("seq", .integer(seq))]
        case .rejected(let error): pairs += [("status", .string("rejected")), ("error", error)]
        }
        if replayed { pairs.append(("replayed", .bool(true))) }
        if !changed { pairs.append(("changed", .bool(false))) }
        return .object(pairs)
    }
}

/// What a push did: a verdict per mutation handled, and the transient fault that stopped the batch, if one did.
package struct PushOutcome: Sendable {
    package let results: [MutationResult]
    /// `storageUnavailable` (retry later) or an internal failure; the mutations after the last result were not tried.
    package let stoppedBy: CaravanError?
}

/// `/sync/v1/push`: each mutation in its own transaction through the write pipeline (validation, policies,
/// constraints, change log, publication), with its verdict stored in that same transaction — a rejection in one of
/// its own — under (caller, mutation id), so a replay is answered from the store and never applied twice.
package struct SyncPusher: Sendable {
    package let pipeline: WritePipeline
    package let catalog: Catalog
    /// The wire error object of a refused write, as REST would send it.
    package let wireError: @Sendable (CaravanError, Role) -> JSONValue

    package init(pipeline: WritePipeline, catalog: Catalog, wireError: @escaping @Sendable (CaravanError, Role) -> JSONValue) {
        self.pipeline = pipeline
        self.catalog = catalog
        self.wireError = wireError
    }

    package func push(_ batch: PushBatch, as identity: Identity) async throws -> PushOutcome {
        let access = catalog.access(for: identity)
        let caller = identity.userID ?? identity.role.rawValue
        var results: [MutationResult] = []
        for mutation in batch.mutations {
            do {
                results.append(try await apply(mutation, access: access, caller: caller))
            } catch let error as CaravanError where error.code == .storageUnavailable || error.code == .internalFailure {
                return PushOutcome(results: results, stoppedBy: error)
            }
        }
        return PushOutcome(results: results, stoppedBy: nil)
    }

    /// Thrown inside a transaction when another request stored this mutation's verdict first.
    private struct AlreadyDecided: Error {}

    private func apply(_ mutation: ClientMutation, access: AccessContext, caller: String) async throws -> MutationResult {
        if let stored = try await storedVerdict(caller: caller, id: mutation.id) { return stored }
        do {
            let write = try MutationWrite(mutation, catalog: catalog)
            let (seq, changed) = try await pipeline.run(access) { transaction in
                try await write.apply(in: transaction)
                let last = await transaction.lastLoggedSeq
                let seq: Int64 = if let last { last } else { try await transaction.changeLogHead() }
                do {
                    try await transaction.insertBookkeeping(Self.verdictRow(caller: caller, id: mutation.id, status: "applied", seq: seq, error: nil),
                                                      into: SystemModule.syncMutations)
                } catch let error as CaravanError where error.code == .uniqueViolation {
                    throw AlreadyDecided()
                }
                return (seq, last != nil)
            }
            return MutationResult(id: mutation.id, status: .applied(seq: seq), replayed: false, changed: changed)
        } catch is AlreadyDecided {
            return try await requireStoredVerdict(caller: caller, id: mutation.id)
        } catch let error as CaravanError where error.code != .storageUnavailable && error.code != .internalFailure {
            let wire = Self.canonicalError(wireError(error, access.identity.role))
            do {
                try await pipeline.run(access) { transaction in
                    try await transaction.insertBookkeeping(Self.verdictRow(caller: caller, id: mutation.id, status: "rejected", seq: nil, error: wire),
                                                      into: SystemModule.syncMutations)
                }
            } catch let stored as CaravanError where stored.code == .uniqueViolation {
                return try await requireStoredVerdict(caller: caller, id: mutation.id)
            }
            return MutationResult(id: mutation.id, status: .rejected(error: wire), replayed: false)
        }
    }

    static func verdictRow(caller: String, id: String, status: String, seq: Int64?, error: JSONValue?) -> RowValues {
        RowValues(columns: ["caller", "mutation_id", "status", "seq", "error"],
                  values: [.text(caller), .text(id), .text(status), seq.map(Value.integer) ?? .null, error.map { .json($0.jsonText) } ?? .null])
    }

    private func requireStoredVerdict(caller: String, id: String) async throws -> MutationResult {
        guard let stored = try await storedVerdict(caller: caller, id: id) else {
            throw CaravanError(.internalFailure, "a mutation's verdict vanished", internalDetail: id)
        }
        return stored
    }

    /// The verdict stored by an earlier push, marked replayed.
    func storedVerdict(caller: String, id: String) async throws -> MutationResult? {
        let table = SystemModule.syncMutations
        let match = BoundPredicate.and([
            .compare(try table.requireColumn("caller"), .eq, .text(caller)),
            .compare(try table.requireColumn("mutation_id"), .eq, .text(id)),
        ])
        let plan = try ReadPlan(table: table, query: Query(limit: 1), access: match, maxRows: nil, includeCount: false)
        guard let row = try await pipeline.store.fetch(plan).rows.first,
              let status = table.position(of: "status").map({ row[$0] }),
              let seq = table.position(of: "seq").map({ row[$0] }),
              let error = table.position(of: "error").map({ row[$0] }) else { return nil }
        switch (status, seq, error) {
        case (.text("applied"), .integer(let seq), _):
            return MutationResult(id: id, status: .applied(seq: seq), replayed: true)
        case (.text("rejected"), _, .json(let text)):
            return MutationResult(id: id, status: .rejected(error: Self.canonicalError(try JSONParser.parse(text))), replayed: true)
        default:
            throw CaravanError(.internalFailure, "a stored verdict is malformed", internalDetail: id)
        }
    }

    /// `{code, message, details, hint}` in that order (a stored verdict may come back with its keys reordered).
    static func canonicalError(_ error: JSONValue) -> JSONValue {
        .object(["code", "message", "details", "hint"].map { ($0, error[$0] ?? .null) })
    }
}

/// One mutation as a write of the pipeline, decoded before its transaction; decoding errors are its rejection.
struct MutationWrite: Sendable {
    let table: TableSchema
    let operation: ClientMutation.Operation
    let rows: [RowValues]
    let match: BoundPredicate?

    init(_ mutation: ClientMutation, catalog: Catalog) throws(CaravanError) {
        let table = try catalog.requireExposedTable(mutation.table)
        guard table.isSynced else {
            throw CaravanError(.notSynced, "The table '\(table.name)' is not synced", hint: "Its app module does not declare it synced")
        }
        self.table = table
        self.operation = mutation.operation
        // A device built before a declared rename sends the column's old name (RenamedColumns).
        let renamed = RenamedColumns(table)
        let record = mutation.record.map(renamed.current), key = mutation.key.map(renamed.current)
        switch mutation.operation {
        case .insert, .upsert:
            guard let record = record else { throw Self.missing("record", mutation) }
            rows = try RowDecoder(table: table, columns: nil, missingIsDefault: true).rows(from: record)
            match = nil
        case .update:
            guard let record = record else { throw Self.missing("record", mutation) }
            guard let key = key else { throw Self.missing("key", mutation) }
            rows = try RowDecoder(table: table, columns: nil, missingIsDefault: true).rows(from: record)
            match = try Self.keyMatch(key, table: table)
        case .delete:
            guard let key = key else { throw Self.missing("key", mutation) }
            rows = []
            match = try Self.keyMatch(key, table: table)
        }
    }

    func apply(in transaction: any StoreTransaction) async throws {
        switch operation {
        case .insert: _ = try await transaction.insert(rows, into: table, conflict: nil)
        case .upsert: _ = try await transaction.insert(rows, into: table, conflict: ConflictTarget(columns: table.primaryKey, resolution: .merge))
        case .update: _ = try await transaction.update(table, set: rows[0], where: match ?? .constant(false))
        case .delete: _ = try await transaction.delete(from: table, where: match ?? .constant(false))
        }
    }

    private static func missing(_ field: String, _ mutation: ClientMutation) -> CaravanError {
        CaravanError(.malformedBody, "Empty or invalid json", details: "\(mutation.operation.rawValue) of \(mutation.table) needs \(field)")
    }

    /// `key` must name exactly the primary key's columns.
    static func keyMatch(_ key: JSONValue, table: TableSchema) throws(CaravanError) -> BoundPredicate {
        guard case .object(let pairs) = key, Set(pairs.map(\.key)) == Set(table.primaryKey), pairs.count == table.primaryKey.count else {
            throw CaravanError(.malformedBody, "Empty or invalid json", details: "key must hold exactly the primary key of \(table.name): \(table.primaryKey.joined(separator: ", "))")
        }
        var terms: [BoundPredicate] = []
        for (name, json) in pairs {
            let column = try table.requireColumn(name)
            do {
                terms.append(.compare(column, .eq, try column.type.value(fromJSON: json)))
            } catch {
                throw CaravanError(error.code, error.message, details: "key \(table.name).\(name)")
            }
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }
}

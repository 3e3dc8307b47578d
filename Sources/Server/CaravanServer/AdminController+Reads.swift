import CaravanCore
import CaravanRealtime
import Hummingbird

/// The read-only admin endpoints: key figures, the exposed tables, the change log and the realtime hub.
extension AdminController {
    /// `GET /admin/api/overview`: the figures of the health page (the console reads `/health` and `/metrics` too).
    func overview(_ context: CaravanRequestContext) async throws -> Response {
        _ = try Self.requireServiceRole(context)
        let log = try await services.store.changeLogState()
        var pairs: [(key: String, value: JSONValue)] = [
            ("status", .string("ok")),
            ("exposed_tables", .integer(Int64(services.catalog.exposedTables.count))),
            ("rpc_functions", .integer(Int64(services.catalog.modules.reduce(0) { $0 + $1.functions.count + $1.asyncFunctions.count }))),
            ("apps", .array(services.catalog.modules.map { JSONValue.string($0.name) })),
            ("change_log", .object([("head", .integer(log.head)), ("compacted_through", .integer(log.compactedThrough)),
                                    ("epoch", .string(log.epoch))])),
            ("auth", .bool(services.auth != nil)),
        ]
        if let realtime = services.realtime {
            pairs.append(("realtime", Self.realtimeFigures(realtime.hub.metrics.snapshot)))
        }
        return Self.json(.object(pairs))
    }

    /// `GET /admin/api/tables`: every table served over REST, with the app module declaring it, its columns, primary
    /// key, foreign keys and how many policies it has (none: the service role only).
    func tables(_ context: CaravanRequestContext) throws -> Response {
        _ = try Self.requireServiceRole(context)
        let apps = Dictionary(services.catalog.modules.flatMap { module in module.tables.map { ($0.name, module.name) } }) { first, _ in first }
        let tables = services.catalog.exposedTables.sorted { $0.name < $1.name }.map { table in
            JSONValue.object([
                ("name", .string(table.name)),
                ("app", apps[table.name].map(JSONValue.string) ?? .null),
                ("primary_key", .array(table.primaryKey.map(JSONValue.string))),
                ("owner", table.owner.map(JSONValue.string) ?? .null),
                ("synced", .bool(table.isSynced)),
                ("policies", .integer(Int64(services.catalog.policies.policies(for: table.name).count))),
                ("columns", .array(table.columns.map { column in
                    .object([("name", .string(column.name)), ("type", .string(column.type.postgresName)), ("nullable", .bool(column.isNullable))])
                })),
                ("foreign_keys", .array(table.foreignKeys.map(Self.foreignKeyJSON))),
            ])
        }
        return Self.json(.object([("tables", .array(tables))]))
    }

    /// `GET /admin/api/realtime`: open sockets and the channels registered on this instance.
    func realtime(_ context: CaravanRequestContext) throws -> Response {
        _ = try Self.requireServiceRole(context)
        guard let realtime = services.realtime else {
            throw AdminAPIError(status: .notFound, code: "CARAVAN_REALTIME_DISABLED", message: "Realtime is not served")
        }
        let channels = realtime.hub.channelSummaries().map { channel in
            JSONValue.object([
                ("socket", .integer(Int64(channel.socket))), ("topic", .string(channel.topic)), ("role", .string(channel.role.rawValue)),
                ("user_id", channel.userID.map(JSONValue.string) ?? .null), ("tables", .array(channel.tables.map(JSONValue.string))),
                ("presences", .integer(Int64(channel.presences))), ("pending_frames", .integer(Int64(channel.pendingFrames))),
                ("protocol", .string(channel.protocolVersion.rawValue)),
            ])
        }
        return Self.json(.object([("figures", Self.realtimeFigures(realtime.hub.metrics.snapshot)), ("channels", .array(channels))]))
    }

    static func realtimeFigures(_ snapshot: RealtimeMetrics.Snapshot) -> JSONValue {
        .object([
            ("sockets", .integer(Int64(snapshot.sockets))), ("channels", .integer(Int64(snapshot.channels))),
            ("events_sent", .integer(Int64(snapshot.eventsSent))), ("resyncs", .integer(Int64(snapshot.resyncs))),
        ])
    }

    // MARK: Change log

    /// `GET /admin/api/changes?table=&after=&limit=`: entries of the REST tables (or of `table`), oldest first.
    /// With `after`, the entries after that `seq` (tailing); without, the latest `limit` entries.
    func changes(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        _ = try Self.requireServiceRole(context)
        let query = QueryString(request.uri.query ?? "")
        let names: [String]
        if let table = query.last("table"), !table.isEmpty {
            names = [try services.catalog.requireExposedTable(table).name]
        } else {
            names = services.catalog.exposedTables.map(\.name)
        }
        let limit = try Self.integer(query.last("limit"), name: "limit", range: 1...Self.maxChangeLimit) ?? Self.defaultChangeLimit
        let state = try await services.store.changeLogState()
        let changes: [Change]
        if let after = try Self.integer(query.last("after"), name: "after", range: 0...Int.max) {
            changes = try await services.store.changeLogPage(after: Int64(after), tables: names, limit: limit).changes
        } else {
            changes = try await latestChanges(tables: names, limit: limit, state: state)
        }
        return Self.json(.object([
            ("head", .integer(state.head)), ("compacted_through", .integer(state.compactedThrough)),
            ("changes", .array(try changes.map(Self.changeJSON))),
        ]))
    }

    /// The latest `limit` entries of `tables`: pages read backwards from the head in windows of seqs (bounded, so a
    /// rarely written table costs at most a few pages).
    private func latestChanges(tables: [String], limit: Int, state: ChangeLogState) async throws -> [Change] {
        let window = Int64(max(limit, 500))
        var upper = state.head
        var collected: [Change] = []
        var rounds = 0
        while collected.count < limit, upper > state.compactedThrough, rounds < 20 {
            let lower = max(state.compactedThrough, upper - window)
            let page = try await services.store.changeLogPage(after: lower, tables: tables, limit: Int(window) + 1)
            collected = page.changes.filter { $0.seq <= upper } + collected
            upper = lower
            rounds += 1
        }
        return Array(collected.suffix(limit))
    }

    static func changeJSON(_ change: Change) throws -> JSONValue {
        .object([
            ("seq", .integer(change.seq)), ("table", .string(change.table)), ("op", .string(change.operation.rawValue)),
            ("primary_key", try JSONParser.parse(change.primaryKey)),
            ("record", try change.record.map(JSONParser.parse) ?? .null),
            ("old_record", try change.oldRecord.map(JSONParser.parse) ?? .null),
            ("committed_at", .string(change.committedAt)), ("actor", .string(change.actor)), ("transaction", .integer(change.transaction)),
        ])
    }

    static func integer(_ text: String?, name: String, range: ClosedRange<Int>) throws(CaravanError) -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw CaravanError(.invalidValue, "\(name) must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }
}

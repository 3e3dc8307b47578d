import CaravanAuth
import CaravanCore
import HTTPTypes
import Hummingbird

/// The console's schema view: a table as its app module declares it (columns, keys, indexes, foreign keys, search and
/// sync settings) and its policies written out per command.
extension AdminController {
    /// `GET /admin/api/tables/:name/schema`: any declared table (internal ones too: they have no policy and are
    /// reachable by the service role only), or 404 `PGRST205` for an unknown name.
    func schema(_ context: CaravanRequestContext) throws -> Response {
        _ = try Self.requireServiceRole(context)
        let name = try context.parameters.require("name")
        guard let table = services.catalog.table(named: name) else {
            throw CaravanError(.unknownTable, "Could not find the table 'public.\(name)' in the schema cache")
        }
        let module = services.catalog.modules.first { $0.tables.contains { $0.name == table.name } }
        let policies = services.catalog.policies.policies(for: table.name)
        let caches = (module?.clientCaches ?? []).compactMap { Self.cacheText($0, table: table.name) }
        let pairs: [(key: String, value: JSONValue)] = [
            ("name", .string(table.name)),
            ("app", module.map { .string($0.name) } ?? .null),
            ("exposure", .string(Self.exposureName(table.exposure))),
            ("primary_key", .array(table.primaryKey.map(JSONValue.string))),
            ("columns", .array(table.columns.map { column in Self.columnJSON(column, table: table) })),
            ("uniques", .array(table.uniques.map { .array($0.map(JSONValue.string)) })),
            ("indexes", .array(table.indexes.map(Self.indexJSON))),
            ("foreign_keys", .array(table.foreignKeys.map(Self.foreignKeyJSON))),
            ("checks", .array(table.checks.map { .string($0.name) })),
            ("search", table.search.map(Self.searchJSON) ?? .null),
            ("sync", .object([
                ("synced", .bool(table.isSynced)), ("change_logged", .bool(table.isChangeLogged)),
                ("owner", table.owner.map(JSONValue.string) ?? .null), ("participants", .array(table.participants.map(JSONValue.string))),
                ("client_caches", .array(caches.map(JSONValue.string))),
            ])),
            ("policies", .array(policies.map(Self.policyJSON))),
            ("commands", Self.commandsJSON(policies)),
            ("has_policies", .bool(!policies.isEmpty)),
        ]
        return Self.json(.object(pairs))
    }

    static func exposureName(_ exposure: Exposure) -> String {
        switch exposure {
        case .rest: "rest"
        case .internal: "internal"
        case .secret: "secret"
        }
    }

    static func columnJSON(_ column: Column, table: TableSchema) -> JSONValue {
        let reference = table.foreignKeys.first { $0.columns.count == 1 && $0.columns[0] == column.name }
        return .object([
            ("name", .string(column.name)), ("type", .string(column.type.postgresName)), ("nullable", .bool(column.isNullable)),
            ("default", column.defaultValue.map { .string(defaultText($0)) } ?? .null),
            ("primary_key", .bool(table.primaryKey.contains(column.name))),
            ("references", reference.map { .string("\($0.referencedTable).\($0.referencedColumns.joined(separator: ","))") } ?? .null),
        ])
    }

    static func defaultText(_ value: ColumnDefault) -> String {
        switch value {
        case .now: "now()"
        case .randomUUID: "gen_random_uuid()"
        case .value(let value): PolicyText.render(.literal(value))
        }
    }

    static func indexJSON(_ index: Index) -> JSONValue {
        let kind = switch index.kind {
        case .btree: "btree"
        case .arrayMembership: "array membership (gin)"
        case .textPrefix: "text prefix"
        }
        return .object([
            ("name", .string(index.name)),
            ("columns", .array(index.keys.map { .string($0.column + ($0.descending ? " desc" : "")) })),
            ("unique", .bool(index.isUnique)), ("kind", .string(kind)), ("partial", .bool(index.predicate != nil)),
        ])
    }

    static func foreignKeyJSON(_ key: ForeignKey) -> JSONValue {
        let onDelete = switch key.onDelete {
        case .noAction: "no action"
        case .cascade: "cascade"
        case .setNull: "set null"
        case .restrict: "restrict"
        }
        return .object([
            ("columns", .array(key.columns.map(JSONValue.string))), ("table", .string(key.referencedTable)),
            ("referenced_columns", .array(key.referencedColumns.map(JSONValue.string))), ("on_delete", .string(onDelete)),
        ])
    }

    static func searchJSON(_ search: SearchIndexes) -> JSONValue {
        .object([
            ("full_text", .array(search.fullText.map { .object([("column", .string($0.column)), ("weight", .double($0.weight))]) })),
            ("fuzzy", .array(search.fuzzy.map(JSONValue.string))),
            ("geo", search.geo.map { .object([("latitude", .string($0.latitude)), ("longitude", .string($0.longitude))]) } ?? .null),
        ])
    }

    static func cacheText(_ rule: CacheRule, table: String) -> String? {
        switch rule {
        case .timeToLive(let name, let seconds) where name == table: "kept \(seconds) s on clients"
        case .keepLast(let name, let count, let group, let order) where name == table: "clients keep the last \(count) per \(group) by \(order)"
        case .purgeOlderThan(let name, let column, let seconds) where name == table: "clients purge rows whose \(column) is older than \(seconds) s"
        default: nil
        }
    }

    static func policyJSON(_ policy: TablePolicy) -> JSONValue {
        .object([
            ("name", .string(policy.name)),
            ("commands", .array(PolicyCommand.allCases.filter(policy.commands.contains).map { .string($0.rawValue) })),
            ("roles", .array(policy.roles.map(\.rawValue).sorted().map(JSONValue.string))),
            ("using", policy.using.map { .string(PolicyText.render($0)) } ?? .null),
            ("check", policy.check.map { .string(PolicyText.render($0)) } ?? .null),
        ])
    }

    /// Per command, the policies that apply and the rule each one sets: `using` for the rows seen (select, update,
    /// delete), `check` for the rows written (insert, update; `using` when no check is declared, as in Postgres).
    static func commandsJSON(_ policies: [TablePolicy]) -> JSONValue {
        .object(PolicyCommand.allCases.map { command in
            let applying = policies.filter { $0.commands.contains(command) }.map { policy -> JSONValue in
                let using = command == .insert ? nil : (policy.using ?? .always(true))
                let check = command == .insert || command == .update ? (policy.check ?? policy.using ?? .always(true)) : nil
                return .object([
                    ("policy", .string(policy.name)), ("roles", .array(policy.roles.map(\.rawValue).sorted().map(JSONValue.string))),
                    ("using", using.map { .string(PolicyText.render($0)) } ?? .null),
                    ("check", check.map { .string(PolicyText.render($0)) } ?? .null),
                ])
            }
            return (key: command.rawValue, value: JSONValue.array(applying))
        })
    }

    // MARK: Keys and the request log

    /// `GET /admin/api/keys`: the deployment's anon and service_role keys (what supabase clients are created with).
    func keys(_ context: CaravanRequestContext) async throws -> Response {
        _ = try Self.requireServiceRole(context)
        let keys = try await services.verifier.apiKeys()
        var response = Self.json(.object([("anon_key", .string(keys.anonKey)), ("service_role_key", .string(keys.serviceRoleKey))]))
        response.headers[.cacheControl] = "no-store"
        return response
    }

    static let requestLogPath = "/admin/api/requests"

    /// `GET /admin/api/requests?after=`: the last requests the server answered, oldest first (after the entry `after`).
    func requestLog(_ request: Request, _ context: CaravanRequestContext) throws -> Response {
        _ = try Self.requireServiceRole(context)
        guard let recent = services.recentRequests else {
            throw AdminAPIError(status: .notFound, code: "CARAVAN_REQUEST_LOG_DISABLED", message: "This server keeps no request log")
        }
        let query = QueryString(request.uri.query ?? "")
        let after = try Self.integer(query.last("after"), name: "after", range: 0...Int.max).map(Int64.init)
        let entries = recent.entries(after: after).map { entry in
            JSONValue.object([
                ("id", .integer(entry.id)), ("time", .string(Timestamp.format(microseconds: entry.time))), ("method", .string(entry.method)),
                ("path", .string(entry.path)), ("status", .integer(Int64(entry.status))),
                ("duration_ms", .double(Double(entry.durationMicroseconds) / 1000)), ("role", entry.role.map { .string($0.rawValue) } ?? .null),
            ])
        }
        return Self.json(.object([("capacity", .integer(Int64(recent.capacity))), ("requests", .array(entries))]))
    }
}

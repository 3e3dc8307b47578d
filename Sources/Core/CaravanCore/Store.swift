/// The role a request runs as, from its verified key or token.
public enum Role: String, Sendable, Hashable {
    case anon
    case authenticated
    case serviceRole = "service_role"
}

/// Who is asking: the role, the user's id (JWT `sub`) and every claim of the verified token.
public struct Identity: Sendable, Hashable {
    public let role: Role
    public let userID: String?
    /// The verified token's payload (`.object([])` for none).
    public let claims: JSONValue

    public init(role: Role, userID: String? = nil, claims: JSONValue = .object([])) {
        self.role = role
        self.userID = userID.flatMap { ColumnType.canonicalUUID($0) ?? $0 }
        self.claims = claims
    }

    /// The claim at `path` (e.g. `["app_metadata", "role"]`), as text the way Postgres' `->>` gives it.
    public func claimText(_ path: [String]) -> String? {
        var current: JSONValue = claims
        for key in path {
            guard let next = current[key] else { return nil }
            current = next
        }
        switch current {
        case .null: return nil
        case .string(let s): return s
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .double(let d): return String(d)
        case .array, .object: return current.jsonText
        }
    }

    /// The identity that bypasses policies (importers, the CLI).
    public static let serviceRole = Identity(role: .serviceRole)
}

/// One output column of a read: the column, the name it is emitted under, and an optional cast.
public struct OutputColumn: Sendable, Hashable {
    public let name: String
    public let column: Column
    public let cast: SelectCast?
    /// For an embedded resource: what the adapters render in place of a column (its value is JSON text).
    package var embed: EmbeddedRead? = nil
    /// For an aggregate (`col.sum()`): what the adapters render in place of a column; `column` then has the
    /// result's name and type.
    public var aggregate: ResolvedAggregate? = nil
}

/// An order term resolved against the table.
public struct ResolvedOrder: Sendable, Hashable {
    public let column: Column
    public let direction: SortDirection
    public let nulls: NullsPlacement
}

/// A read, fully resolved and typed: what an adapter compiles into one statement (plus a count).
public struct ReadPlan: Sendable {
    public let table: TableSchema
    public let outputs: [OutputColumn]
    /// The request's filters ANDed with the caller's access rule.
    public let filter: BoundPredicate
    public let order: [ResolvedOrder]
    public let limit: Int?
    public let offset: Int
    public let includeCount: Bool
    /// The implicit GROUP BY of a select with aggregates: its columns that are not aggregated (empty otherwise).
    public let groupBy: [Column]

    /// Resolves `query` against `table`: every column must exist (42703), every operator must fit its column,
    /// every operand must type. `access` is ANDed into the filter; `maxRows` caps the limit.
    /// `embedding` resolves embedded resources (`select=*,reviews(*)`); without it they are refused (PGRST200).
    /// Aggregates (`count()`, `col.sum()`, …) are refused (PGRST123) unless `aggregates` allows them.
    public init(table: TableSchema, query: Query, access: BoundPredicate, maxRows: Int?, includeCount: Bool,
                embedding: EmbeddingContext? = nil, aggregates: Bool = false) throws(CaravanError) {
        try Self.requireAggregatesAllowed(query.select, allowed: aggregates)
        let (outputs, innerConditions) = try Self.outputs(of: query, table: table, maxRows: maxRows, embedding: embedding)
        guard outputs.count <= QueryLimits.selectedValues else {
            throw QueryLimits.exceeded("values selected by one read", limit: QueryLimits.selectedValues, hint: "Select fewer columns")
        }
        var requestFilter = try query.filter.bound(to: table)
        if !innerConditions.isEmpty { requestFilter = .and([requestFilter] + innerConditions) }
        var order: [ResolvedOrder] = []
        for term in query.order {
            let column = try table.resolveColumn(term.column)
            order.append(ResolvedOrder(column: column, direction: term.direction, nulls: term.effectiveNulls))
        }
        self.groupBy = try Self.grouping(outputs, table: table)
        if outputs.contains(where: { $0.aggregate != nil }) {
            order = try Self.groupedOrder(order, grouping: groupBy, table: table)
        } else if order.isEmpty {
            for key in table.primaryKey {
                let column = try table.requireColumn(key)
                order.append(ResolvedOrder(column: column, direction: .ascending, nulls: .last))
            }
        }
        self.table = table
        self.outputs = outputs
        switch (requestFilter, access) {
        case (.constant(true), _): self.filter = access
        case (_, .constant(true)): self.filter = requestFilter
        default: self.filter = .and([requestFilter, access])
        }
        self.order = order
        if let maxRows {
            self.limit = min(query.limit ?? maxRows, maxRows)
        } else {
            self.limit = query.limit
        }
        self.offset = query.offset ?? 0
        self.includeCount = includeCount
    }

    /// The outputs of `query`'s select, embedded resources resolved, and the conditions their `!inner` puts on a row.
    private static func outputs(of query: Query, table: TableSchema, maxRows: Int?, embedding: EmbeddingContext?)
        throws(CaravanError) -> ([OutputColumn], [BoundPredicate]) {
        var outputs: [OutputColumn] = []
        var innerConditions: [BoundPredicate] = []
        for item in query.select {
            switch item {
            case .star:
                outputs.append(contentsOf: table.columns.map { OutputColumn(name: $0.name, column: $0, cast: nil) })
            case .column(let name, let alias, let cast):
                let column = try table.resolveColumn(name)
                outputs.append(OutputColumn(name: alias ?? column.jsonPath?.outputName(column: column.name) ?? name, column: column, cast: cast))
            case .aggregate(let request):
                outputs.append(try aggregateOutput(request, table: table))
            case .embed(let request):
                guard let embedding else {
                    throw CaravanError(.unsupportedEmbedding, "Could not find a relationship between '\(table.name)' and '\(request.table)' in the schema cache",
                                       hint: "Embedding is available on reads (GET), not here")
                }
                let resolved = try EmbedResolver(context: embedding, query: query, maxRows: maxRows)
                    .resolve(request, parent: table, path: request.name)
                outputs += resolved.outputs
                if let condition = resolved.innerCondition { innerConditions.append(condition) }
            }
        }
        if let path = query.embedded.keys.sorted().first(where: { path in !Self.embedPaths(query.select).contains(path) }) {
            throw CaravanError(.unsupportedEmbedding, "Could not find a relationship between '\(table.name)' and '\(path)' in the schema cache",
                               hint: "Parameters of an embedded resource need it in select: select=*,\(path)(*)")
        }
        return (outputs, innerConditions)
    }
}

extension ReadPlan {
    /// Whether the select aggregates (`count()`, `col.sum()`, …): one row per group of `groupBy`.
    public var isAggregate: Bool { outputs.contains { $0.aggregate != nil } }

    /// The tables of the embedded resources, nested ones included (their `beforeRead` behaviours run before the read).
    public var embeddedTables: [String] {
        func tables(_ outputs: [OutputColumn]) -> [String] {
            outputs.compactMap(\.embed).flatMap { [$0.table.name] + tables($0.outputs) }
        }
        return tables(outputs)
    }

    /// The paths of every embedded resource of a select, nested ones as `parent.child`.
    static func embedPaths(_ items: [SelectItem], prefix: String = "") -> Set<String> {
        var paths: Set<String> = []
        for case .embed(let request) in items {
            let path = prefix + request.name
            paths.insert(path)
            paths.formUnion(embedPaths(request.select, prefix: path + "."))
        }
        return paths
    }
}

/// The rows of a read, in `outputs` order, and the total when a count was asked for.
public struct ReadResult: Sendable {
    public let outputs: [OutputColumn]
    public let rows: [[Value]]
    public let totalCount: Int?

    public init(outputs: [OutputColumn], rows: [[Value]], totalCount: Int?) {
        self.outputs = outputs
        self.rows = rows
        self.totalCount = totalCount
    }
}

/// What happened to one row of a batched write.
public enum RowOutcome: Sendable {
    case inserted
    case updated
    case rejected(CaravanError)
}

/// The storage port. Implemented by `SQLiteStore` (and, later, `PostgresStore`); knows no SQL dialect.
public protocol Store: ChangeLogStore {
    /// The dialect whose frozen migration SQL this store runs.
    var dialect: SQLDialect { get }

    /// Applies, in order, the migrations not yet applied; returns the identifiers applied now.
    func migrate(_ migrations: [Migration]) async throws -> [String]

    /// Identifiers of the migrations already applied.
    func appliedMigrations() async throws -> [String]

    /// Runs a read plan.
    func fetch(_ plan: ReadPlan) async throws -> ReadResult

    /// Runs `body` in one write transaction as `access.identity`; returns its result and the changes it logged.
    /// Any error rolls everything back; with `rollback` the transaction is rolled back even on success.
    /// Sealed: only code of this package holds a `TransactionGrant`, so outside it every write goes through
    /// `WritePipeline` (which publishes what commits) and every read-only transaction through `readOnly`.
    func transaction<T: Sendable>(_ access: AccessContext, rollback: Bool, grant: TransactionGrant,
                                  _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> (T, [Change])

    /// Change-log entries after `seq`, oldest first.
    func changes(after seq: Int64, limit: Int) async throws -> [Change]
}

/// The right to open a raw store transaction, which only this package can create: the write pipeline, the
/// signing secret's bookkeeping row, and the stores themselves. Everyone else writes through `WritePipeline`.
public struct TransactionGrant: Sendable {
    package init() {}
}

extension Store {
    /// Runs `body` as `access.identity` in a transaction that is always rolled back: one consistent view for reads
    /// that need a `StoreTransaction` (a user's export, in-process RPC calls in benchmarks). Whatever it writes is
    /// undone and nothing is published.
    public func readOnly<T: Sendable>(_ access: AccessContext, _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> T {
        try await transaction(access, rollback: true, grant: TransactionGrant(), body).0
    }
}

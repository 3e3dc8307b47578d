/// What an app module contributes: its tables, frozen migrations, row-level policies and RPC functions.
public struct AppModule: Sendable {
    public let name: String
    public let tables: [TableSchema]
    public let migrations: [Migration]
    /// Policies by table name. A table with none is reachable by the service role only.
    public let policies: [String: [TablePolicy]]
    public let functions: [RPCFunction]
    /// Derived columns, `updated_at` maintenance and write hooks, per table.
    public let behaviours: [TableBehaviour]
    /// Functions of `functions` that a server runs on its own, as the service role, at a fixed interval.
    public let schedules: [ScheduledFunction]
    /// Functions that wait on something outside the database (outside any transaction).
    public let asyncFunctions: [AsyncRPCFunction]
    /// How the client SDK's local store keeps this module's synced tables and caches (LangMatcher: the last 100
    /// messages per conversation, profiles for 24 h, …).
    public let clientCaches: [CacheRule]
    /// The storage buckets the module needs (LangMatcher's `avatars`): `caravan serve` creates each one that does not
    /// exist yet, with these limits (an existing bucket is left as its operator set it).
    public let buckets: [BucketDeclaration]
    /// Functions served at `/functions/v1/<name>` (Supabase's Edge Functions).
    public let edgeFunctions: [EdgeFunction]
    /// Tables, columns and indexes the declarations dropped on purpose: `caravan migrations new` drops only these
    /// (anything else its tables no longer have is refused).
    public let removals: [SchemaRemoval]
    /// Each synced table's sync epoch, when a breaking change raised it (a table not listed is at epoch 1): raise it
    /// by one with a change old rows cannot follow (a column's meaning changed, rows rewritten by a migration). A
    /// device's pull cursor made under an older epoch of a table gets 409 must-refetch for that table only.
    public let syncEpochs: [String: Int]

    public init(name: String, tables: [TableSchema], migrations: [Migration], policies: [String: [TablePolicy]] = [:], functions: [RPCFunction] = [],
                behaviours: [TableBehaviour] = [], schedules: [ScheduledFunction] = [], asyncFunctions: [AsyncRPCFunction] = [],
                clientCaches: [CacheRule] = [], buckets: [BucketDeclaration] = [], edgeFunctions: [EdgeFunction] = [],
                removals: [SchemaRemoval] = [], syncEpochs: [String: Int] = [:]) {
        self.removals = removals
        self.syncEpochs = syncEpochs
        self.buckets = buckets
        self.edgeFunctions = edgeFunctions
        self.name = name
        self.tables = tables
        self.migrations = migrations
        self.policies = policies
        self.functions = functions
        self.behaviours = behaviours
        self.schedules = schedules
        self.asyncFunctions = asyncFunctions
        self.clientCaches = clientCaches
    }
}

/// A module's maintenance function (GroupDecisions' `expire_decisions`) that `caravan serve` runs every `interval`,
/// first at start. The function must take no arguments.
public struct ScheduledFunction: Sendable, Hashable {
    public let function: String
    public let interval: Duration

    public init(_ function: String, every interval: Duration) {
        self.function = function
        self.interval = interval
    }
}

/// Every table, policy and function of a deployment.
public struct Catalog: Sendable {
    public let modules: [AppModule]
    private let tables: [String: TableSchema]
    private let functions: [String: RPCFunction]
    private let behaviours: [String: TableBehaviour]
    private let asyncFunctions: [String: AsyncRPCFunction]
    private let edgeFunctions: [String: EdgeFunction]
    public let policies: PolicySet
    /// Every table served over REST (computed once: every read that embeds looks through it for junctions).
    public let exposedTables: [TableSchema]
    private let syncEpochs: [String: Int]

    public init(modules: [AppModule]) {
        self.modules = modules
        var tables: [String: TableSchema] = [:]
        var policies: [String: [TablePolicy]] = [:]
        var functions: [String: RPCFunction] = [:]
        var behaviours: [String: TableBehaviour] = [:]
        var asyncFunctions: [String: AsyncRPCFunction] = [:]
        var edgeFunctions: [String: EdgeFunction] = [:]
        for module in modules {
            for function in module.edgeFunctions { edgeFunctions[function.name] = function }
            for function in module.asyncFunctions { asyncFunctions[function.name] = function }
            for behaviour in module.behaviours { behaviours[behaviour.table] = behaviour }
            for table in module.tables { tables[table.name] = table }
            for (table, list) in module.policies { policies[table, default: []].append(contentsOf: list) }
            for function in module.functions { functions[function.name] = function }
        }
        self.tables = tables
        self.functions = functions
        self.behaviours = behaviours
        self.asyncFunctions = asyncFunctions
        self.edgeFunctions = edgeFunctions
        self.policies = PolicySet(policies)
        exposedTables = modules.flatMap(\.tables).filter { $0.exposure == .rest }
        syncEpochs = modules.reduce(into: [:]) { epochs, module in epochs.merge(module.syncEpochs) { max($0, $1) } }
    }

    /// The table's sync epoch (`AppModule.syncEpochs`; 1 unless a breaking change raised it).
    public func syncEpoch(of table: String) -> Int { max(syncEpochs[table] ?? 1, 1) }

    /// The catalog of `modules`, refusing what cannot be served together: two modules declaring a table of the same
    /// name (the error names both), and an app table under a reserved prefix (`auth_`, `caravan_`),
    /// which SQLite uses for Caravan's own tables.
    public static func validated(modules: [AppModule]) throws(CaravanError) -> Catalog {
        var owners: [String: String] = [:]
        for module in modules {
            for table in module.tables {
                let key = table.name
                if let other = owners[key] {
                    throw CaravanError(.invalidConfiguration,
                                       "apps \(other) and \(module.name) both declare the table \(table.name); enable only one of them")
                }
                owners[key] = module.name
                if !ReservedTableNames.systemModules.contains(module.name),
                   ReservedTableNames.prefixes.contains(where: { table.name.hasPrefix($0) }) {
                    throw CaravanError(.invalidConfiguration,
                                       "app \(module.name) declares the table \(table.name), whose prefix is reserved for Caravan's own tables")
                }
            }
        }
        return Catalog(modules: modules)
    }

    /// Every migration in the order stores apply them (`Migration.applyOrder`): phase by phase, module by module.
    public var migrations: [Migration] { Migration.applyOrder(modules.flatMap(\.migrations)) }

    /// Every table, module by module.
    public var allTables: [TableSchema] { modules.flatMap(\.tables) }

    /// A table served over REST, or PGRST205.
    public func requireExposedTable(_ name: String) throws(CaravanError) -> TableSchema {
        guard let table = tables[name], table.exposure == .rest else {
            let suggestion = FuzzyName.closest(to: name, among: exposedTables.map(\.name))
            throw CaravanError(.unknownTable, "Could not find the table 'public.\(name)' in the schema cache",
                               hint: suggestion.map { "Perhaps you meant the table 'public.\($0)'" })
        }
        return table
    }

    /// What the pipeline does for `table` besides its declaration, or nil.
    public func behaviour(of table: String) -> TableBehaviour? { behaviours[table] }

    /// Any table, internal ones included.
    public func table(named name: String) -> TableSchema? { tables[name] }

    /// An RPC function, or PGRST202.
    public func requireFunction(_ name: String) throws(CaravanError) -> RPCFunction {
        guard let function = functions[name] else {
            throw CaravanError(.unknownFunction, "Could not find the function public.\(name) in the schema cache")
        }
        return function
    }

    /// The function served at `/functions/v1/<name>`, or nil.
    public func edgeFunction(named name: String) -> EdgeFunction? { edgeFunctions[name] }

    /// The asynchronous RPC function `name`, or nil.
    public func asyncFunction(named name: String) -> AsyncRPCFunction? { asyncFunctions[name] }

    /// The access context of `identity` in this deployment.
    public func access(for identity: Identity) -> AccessContext {
        AccessContext(identity: identity, policies: policies, catalog: self)
    }
}

/// What an app module contributes: its tables, frozen migrations, row-level policies and RPC functions.
public struct AppModule: Sendable {
    public let name: String
    public let tables: [TableSchema]
    public let migrations: [Migration]
    /// Policies by table name. A table with none is reachable by the service role only.
    public let policies: [String: [TablePolicy]]
    public let functions: [RPCFunction]

    public init(name: String, tables: [TableSchema], migrations: [Migration], policies: [String: [TablePolicy]] = [:], functions: [RPCFunction] = []) {
        self.name = name
        self.tables = tables
        self.migrations = migrations
        self.policies = policies
        self.functions = functions
    }
}

/// Every table, policy and function of a deployment.
public struct Catalog: Sendable {
    public let modules: [AppModule]
    private let tables: [String: TableSchema]
    private let functions: [String: RPCFunction]
    public let policies: PolicySet

    public init(modules: [AppModule]) {
        self.modules = modules
        var tables: [String: TableSchema] = [:]
        var policies: [String: [TablePolicy]] = [:]
        var functions: [String: RPCFunction] = [:]
        for module in modules {
            for table in module.tables { tables[table.name] = table }
            for (table, list) in module.policies { policies[table, default: []].append(contentsOf: list) }
            for function in module.functions { functions[function.name] = function }
        }
        self.tables = tables
        self.functions = functions
        self.policies = PolicySet(policies)
    }

    /// Every migration, module by module, in declaration order.
    public var migrations: [Migration] { modules.flatMap(\.migrations) }

    /// Every table, module by module.
    public var allTables: [TableSchema] { modules.flatMap(\.tables) }

    /// A table served over REST, or PGRST205.
    public func requireExposedTable(_ name: String) throws(CaravanError) -> TableSchema {
        guard let table = tables[name], table.exposure == .rest else {
            throw CaravanError(.unknownTable, "Could not find the table 'public.\(name)' in the schema cache")
        }
        return table
    }

    /// Any table, internal ones included.
    public func table(named name: String) -> TableSchema? { tables[name] }

    /// An RPC function, or PGRST202.
    public func requireFunction(_ name: String) throws(CaravanError) -> RPCFunction {
        guard let function = functions[name] else {
            throw CaravanError(.unknownFunction, "Could not find the function public.\(name) in the schema cache")
        }
        return function
    }

    /// The access context of `identity` in this deployment.
    public func access(for identity: Identity) -> AccessContext {
        AccessContext(identity: identity, policies: policies, catalog: self)
    }
}

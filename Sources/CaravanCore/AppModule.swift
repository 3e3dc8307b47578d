/// What an app module contributes: its tables, its frozen migrations and, until policies land, which of
/// its tables anyone may read.
public struct AppModule: Sendable {
    public let name: String
    public let tables: [TableSchema]
    public let migrations: [Migration]
    /// Tables readable by `anon` and `authenticated`. Every other table is service-role only.
    public let publiclyReadable: Set<String>

    public init(name: String, tables: [TableSchema], migrations: [Migration], publiclyReadable: Set<String>) {
        self.name = name
        self.tables = tables
        self.migrations = migrations
        self.publiclyReadable = publiclyReadable
    }
}

/// Every table of a deployment, looked up by name; the access rules for reads.
public struct Catalog: Sendable {
    public let modules: [AppModule]
    private let tables: [String: TableSchema]
    private let publiclyReadable: Set<String>

    public init(modules: [AppModule]) {
        self.modules = modules
        var tables: [String: TableSchema] = [:]
        var readable: Set<String> = []
        for module in modules {
            for table in module.tables { tables[table.name] = table }
            readable.formUnion(module.publiclyReadable)
        }
        self.tables = tables
        self.publiclyReadable = readable
    }

    /// Every migration, module by module, in declaration order.
    public var migrations: [Migration] { modules.flatMap(\.migrations) }

    /// Every table, module by module.
    public var allTables: [TableSchema] { modules.flatMap(\.tables) }

    /// A table served over REST, or PGRST205.
    public func requireExposedTable(_ name: String) throws(CaravanError) -> TableSchema {
        guard let table = tables[name], table.exposure == .rest else {
            throw CaravanError(
                .unknownTable,
                "Could not find the table 'public.\(name)' in the schema cache"
            )
        }
        return table
    }

    /// Any table, internal ones included.
    public func table(named name: String) -> TableSchema? { tables[name] }

    /// The rule ANDed into every read: closed by default.
    public func readAccess(to table: TableSchema, for identity: Identity) -> BoundPredicate {
        switch identity.role {
        case .serviceRole: .constant(true)
        case .anon, .authenticated: .constant(publiclyReadable.contains(table.name))
        }
    }
}

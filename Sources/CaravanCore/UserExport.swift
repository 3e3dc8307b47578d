/// One user's own data (`caravan export user`, the `export_my_data` RPC): their profile — never a credential — and
/// every row of every table that declares an owner column (`TableSchema.owner`) holding their id. Rows are as
/// stored; other users appear in them only as the ids their columns hold (no other user's profile is read).
public struct UserExport: Sendable {
    /// One owned table's rows, in primary-key order.
    public struct Table: Sendable {
        public let name: String
        public let result: ReadResult
    }

    public let userID: String
    /// The profile columns of `users` (nil when the user does not exist).
    public let profile: ReadResult
    public let tables: [Table]

    /// The columns of `users` an export shows: no password hash.
    public static let profileColumns = ["id", "email", "phone", "app_metadata", "user_metadata", "is_anonymous", "created_at",
                                        "updated_at", "email_confirmed_at", "phone_confirmed_at", "last_sign_in_at"]

    /// Reads the export inside `transaction` (one snapshot). The owned rows are also filtered by the transaction's
    /// select policy of each table, so a caller never gets more than REST would give it; the profile row is the
    /// user's own, read without a policy (the `users` table has none).
    public static func collect(_ userID: String, in transaction: any StoreTransaction) throws -> UserExport {
        guard let id = ColumnType.canonicalUUID(userID) else {
            throw CaravanError(.invalidValue, "invalid input syntax for type uuid: \"\(userID.prefix(64))\"")
        }
        let users = SystemModule.users
        let select = profileColumns.map { SelectItem.column(name: $0, alias: nil, cast: nil) }
        let profile = try transaction.fetch(try ReadPlan(table: users, query: Query(select: select),
                                                         access: .compare(try users.requireColumn("id"), .eq, .text(id)),
                                                         maxRows: nil, includeCount: false))
        var tables: [Table] = []
        for table in transaction.access.catalog.allTables where table.exposure == .rest {
            guard let owner = table.owner else { continue }
            let mine = BoundPredicate.compare(try table.requireColumn(owner), .eq, .text(id))
            let rule = try transaction.access.readRule(table)
            let plan = try ReadPlan(table: table, query: Query(), access: .and([rule, mine]), maxRows: nil, includeCount: false)
            tables.append(Table(name: table.name, result: try transaction.fetch(plan)))
        }
        return UserExport(userID: id, profile: profile, tables: tables)
    }

    /// Whether the user exists.
    public var userExists: Bool { !profile.rows.isEmpty }

    /// `{"user": {profile…}, "tables": {"favorites": [{…}], …}}`.
    public var json: JSONValue {
        let user: JSONValue = profile.rows.first.map { Self.object($0, profile.outputs) } ?? .null
        let tables = JSONValue.object(self.tables.map { table in
            (key: table.name, value: .array(table.result.rows.map { Self.object($0, table.result.outputs) }))
        })
        return .object([("user_id", .string(userID)), ("user", user), ("tables", tables)])
    }

    /// One CSV document per part: `user.csv`, then `<table>.csv` for each owned table.
    public var csvFiles: [(name: String, bytes: [UInt8])] {
        [(name: "user.csv", bytes: profile.csv)] + tables.map { (name: $0.name + ".csv", bytes: $0.result.csv) }
    }

    static func object(_ row: [Value], _ outputs: [OutputColumn]) -> JSONValue {
        .object(zip(outputs, row).map { output, value in (key: output.name, value: JSONValue(value)) })
    }
}

/// `export_my_data()`: the calling user's export (see `UserExport`) as one JSON document. Anonymous callers and the
/// service role (who is nobody in particular) are refused.
extension UserExport {
    public static let function = RPCFunction("export_my_data", parameters: [], readOnly: true) { _, transaction in
        guard let userID = transaction.access.identity.userID else {
            throw CaravanError(.permissionDenied, "export_my_data needs a signed-in user", hint: "Call it with the user's access token")
        }
        return .scalar(.json(try collect(userID, in: transaction).json.jsonText))
    }
}

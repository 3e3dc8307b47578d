/// One user's own data (`caravan export user`, the `export_my_data` RPC): their profile — never a credential — and
/// every row of every table that declares an owner column (`TableSchema.owner`) or participant columns
/// (`TableSchema.participants`) holding their id. Rows are as stored; other users appear in them as the ids their
/// columns hold, and, where a table declares an export card (`TableSchema.exportCard`, a public profile), as that
/// card only (id and first name) in `people` — nothing else of theirs is read.
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
    /// The cards of the other users the exported rows name, per card table (`profiles`: id and first name).
    public let people: [Table]
    /// The user's stored files (storage objects they own), each with a signed link; empty until a
    /// `UserExportFiles` source adds them (see `read(_:access:store:files:)`).
    public var files: [File] = []

    /// One stored file of the user: where it is, what it is, and a link that downloads it without a key until
    /// `expiresAt`.
    public struct File: Sendable, Hashable {
        public let bucket: String
        public let name: String
        public let size: Int64
        public let contentType: String
        public let updatedAt: String
        /// The link's path on the server (`/storage/v1/object/sign/<bucket>/<name>?token=…`): relative to the
        /// server's URL, as Supabase's `signedURL` is.
        public let signedURL: String
        /// When the link stops working (a timestamp, UTC).
        public let expiresAt: String

        public init(bucket: String, name: String, size: Int64, contentType: String, updatedAt: String, signedURL: String, expiresAt: String) {
            self.bucket = bucket
            self.name = name
            self.size = size
            self.contentType = contentType
            self.updatedAt = updatedAt
            self.signedURL = signedURL
            self.expiresAt = expiresAt
        }

        static let columns: [(String, ColumnType)] = [("bucket_id", .text), ("name", .text), ("size", .integer), ("content_type", .text),
                                                      ("updated_at", .timestamp), ("signed_url", .text), ("expires_at", .timestamp)]

        var values: [Value] {
            [.text(bucket), .text(name), .integer(size), .text(contentType), .text(updatedAt), .text(signedURL), .text(expiresAt)]
        }
    }

    /// How long the links of an export's files work: one hour.
    public static let fileLinkLifetime: Int64 = 3600

    /// The columns of `users` an export shows: no password hash.
    public static let profileColumns = ["id", "email", "phone", "app_metadata", "user_metadata", "is_anonymous", "created_at",
                                        "updated_at", "email_confirmed_at", "phone_confirmed_at", "last_sign_in_at"]

    /// Reads the export inside `transaction` (one snapshot). Rows the user owns (`TableSchema.owner`) are read whatever
    /// the table's select policy (they are the user's data, even where users may only insert them); rows the user
    /// only takes part in (`participants`) and the other users' cards are filtered by the transaction's select
    /// policy, so a caller never gets more of anyone else than REST would give it. The profile row is the user's own,
    /// read without a policy (the `users` table has none).
    public static func collect(_ userID: String, in transaction: any StoreTransaction) async throws -> UserExport {
        guard let id = ColumnType.canonicalUUID(userID) else {
            throw CaravanError(.invalidValue, "invalid input syntax for type uuid: \"\(userID.prefix(64))\"")
        }
        let users = SystemModule.users
        let select = profileColumns.map { SelectItem.column(name: $0, alias: nil, cast: nil) }
        let profile = try await transaction.fetch(try ReadPlan(table: users, query: Query(select: select),
                                                         access: .compare(try users.requireColumn("id"), .eq, .text(id)),
                                                         maxRows: nil, includeCount: false))
        let catalog = transaction.access.catalog
        let cardTables = Set(catalog.allTables.filter { $0.exportCard != nil }.map(\.name))
        var tables: [Table] = []
        var others = Set<String>()
        for table in catalog.allTables where table.exposure == .rest {
            let userColumns = (table.owner.map { [$0] } ?? []) + table.participants
            guard !userColumns.isEmpty else { continue }
            // The rows the user owns are theirs whatever the select policy says (analytics events are insert-only
            // for users, yet theirs to export); rows they only take part in are read under the policy.
            let owned = try table.owner.map { BoundPredicate.compare(try table.requireColumn($0), .eq, .text(id)) }
            let participating = try table.participants.map { BoundPredicate.compare(try table.requireColumn($0), .eq, .text(id)) }
            let rule = try transaction.access.readRule(table)
            let mine = BoundPredicate.or((owned.map { [$0] } ?? []) + (participating.isEmpty ? [] : [.and([rule, .or(participating)])]))
            let plan = try ReadPlan(table: table, query: Query(), access: mine, maxRows: nil, includeCount: false)
            let result = try await transaction.fetch(plan)
            tables.append(Table(name: table.name, result: result))
            // The other users these rows name: in user columns, and in single-column references to a card table.
            let naming = Set(userColumns + table.foreignKeys.filter { $0.columns.count == 1 && cardTables.contains($0.referencedTable) }.map { $0.columns[0] })
            for row in result.rows {
                for (output, value) in zip(result.outputs, row) where naming.contains(output.name) {
                    if case .text(let other) = value, let other = ColumnType.canonicalUUID(other), other != id { others.insert(other) }
                }
            }
        }
        var people: [Table] = []
        for table in catalog.allTables where table.exposure == .rest {
            guard let card = table.exportCard, table.primaryKey.count == 1 else { continue }
            let key = try table.requireColumn(table.primaryKey[0])
            let named: BoundPredicate = others.isEmpty ? .constant(false) : .inList(key, try others.sorted().map { try key.type.value(fromText: $0) })
            let query = Query(select: card.map { SelectItem.column(name: $0, alias: nil, cast: nil) }, order: [OrderTerm(column: key.name, direction: .ascending)])
            let plan = try ReadPlan(table: table, query: query, access: .and([try transaction.access.readRule(table), named]), maxRows: nil, includeCount: false)
            people.append(Table(name: table.name, result: try await transaction.fetch(plan)))
        }
        return UserExport(userID: id, profile: profile, tables: tables, people: people)
    }

    /// Reads `userID`'s export in one read-only transaction as `access`, then — when the user exists and a file
    /// source is given — lists their stored files with links valid `fileLinkLifetime` seconds.
    public static func read(_ userID: String, access: AccessContext, store: any Store, files: (any UserExportFiles)?) async throws -> UserExport {
        var export = try await store.readOnly(access) { transaction in try await collect(userID, in: transaction) }
        if export.userExists, let files {
            export.files = try await files.exportFiles(of: export.userID, linkLifetime: fileLinkLifetime)
        }
        return export
    }

    /// Whether the user exists.
    public var userExists: Bool { !profile.rows.isEmpty }

    /// `{"user_id", "user": {profile…}, "tables": {"favorites": [{…}], …}, "people": {"profiles": [{"id", "first_name"}]},
    /// "storage_objects": [{"bucket_id", "name", "size", "content_type", "updated_at", "signed_url", "expires_at"}]}`.
    public var json: JSONValue {
        let user: JSONValue = profile.rows.first.map { Self.object($0, profile.outputs) } ?? .null
        let tables = JSONValue.object(self.tables.map { table in
            (key: table.name, value: .array(table.result.rows.map { Self.object($0, table.result.outputs) }))
        })
        let people = JSONValue.object(self.people.map { table in
            (key: table.name, value: .array(table.result.rows.map { Self.object($0, table.result.outputs) }))
        })
        let files = JSONValue.array(filesResult.rows.map { Self.object($0, filesResult.outputs) })
        return .object([("user_id", .string(userID)), ("user", user), ("tables", tables), ("people", people), ("storage_objects", files)])
    }

    /// One CSV document per part: `user.csv`, then `<table>.csv` for each owned table, then `people.<table>.csv`
    /// for each card table (the other users named, id and first name), then `storage_objects.csv` (the files).
    public var csvFiles: [(name: String, bytes: [UInt8])] {
        [(name: "user.csv", bytes: profile.csv)] + tables.map { (name: $0.name + ".csv", bytes: $0.result.csv) }
            + people.map { (name: "people." + $0.name + ".csv", bytes: $0.result.csv) } + [(name: "storage_objects.csv", bytes: filesResult.csv)]
    }

    /// The files as a result with typed columns (for JSON and CSV alike).
    var filesResult: ReadResult {
        let outputs = File.columns.map { name, type in OutputColumn(name: name, column: Column(name, type), cast: nil) }
        return ReadResult(outputs: outputs, rows: files.map(\.values), totalCount: nil)
    }

    static func object(_ row: [Value], _ outputs: [OutputColumn]) -> JSONValue {
        .object(zip(outputs, row).map { output, value in (key: output.name, value: JSONValue(value)) })
    }
}

/// The stored files a user owns, each with a signed link: what file storage adds to a per-user export. Core code
/// knows only this port; `CaravanStorage` implements it over its object table and signed URLs.
public protocol UserExportFiles: Sendable {
    /// The files `userID` owns (every bucket), in bucket and name order, each with a link valid `linkLifetime` seconds.
    func exportFiles(of userID: String, linkLifetime: Int64) async throws -> [UserExport.File]
}

/// `export_my_data()`: the calling user's export (see `UserExport`) as one JSON document, with their stored files
/// when the server serves storage. Anonymous callers and the service role (who is nobody in particular) are
/// refused. It runs outside a transaction (signing the files' links waits on the signer): the rows are read in one
/// read-only transaction as the caller, the files after it. It only reads, so GET calls it too.
extension UserExport {
    public static let function = AsyncRPCFunction("export_my_data", parameters: [], readOnly: true) { _, context in
        guard let userID = context.identity.userID else {
            throw CaravanError(.permissionDenied, "export_my_data needs a signed-in user", hint: "Call it with the user's access token")
        }
        let export = try await read(userID, access: context.catalog.access(for: context.identity), store: context.pipeline.store,
                                    files: context.exportFiles)
        return .scalar(.json(export.json.jsonText))
    }
}

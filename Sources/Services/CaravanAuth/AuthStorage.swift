import CaravanCore

/// Typed reads and writes of the auth tables on one store transaction (as the service role: auth is the only
/// writer of these tables, and none of them is reachable through REST).
struct AuthStorage {
    let tx: any StoreTransaction
    /// The transaction's instant, canonical (`…T…Z`).
    let now: String

    static func column(_ table: TableSchema, _ name: String) throws -> Column {
        try table.requireColumn(name)
    }

    static func equals(_ table: TableSchema, _ name: String, _ value: Value) throws -> BoundPredicate {
        .compare(try column(table, name), .eq, value)
    }

    /// A plan reading every column of `table` where `filter` holds.
    static func plan(_ table: TableSchema, _ filter: BoundPredicate, order: [OrderTerm] = [], limit: Int? = nil, offset: Int? = nil) throws -> ReadPlan {
        try ReadPlan(table: table, query: Query(order: order, limit: limit, offset: offset), access: filter, maxRows: nil, includeCount: false)
    }

    static func records(_ result: ReadResult) -> [Record] {
        result.rows.map { Record(outputs: result.outputs, row: $0) }
    }

    func records(_ table: TableSchema, _ filter: BoundPredicate, order: [OrderTerm] = [], limit: Int? = nil) async throws -> [Record] {
        await Self.records(try await tx.fetch(try Self.plan(table, filter, order: order, limit: limit)))
    }

    func first(_ table: TableSchema, where column: String, _ value: Value) async throws -> Record? {
        try await records(table, try Self.equals(table, column, value), limit: 1).first
    }

    // MARK: Users

    /// The two reads of a user: the `users` row and their identities, oldest first.
    static func userPlans(id: String) throws -> (user: ReadPlan, identities: ReadPlan, factors: ReadPlan) {
        let users = SystemModule.users, identities = AuthSchema.identities, factors = AuthSchema.mfaFactors
        return (try plan(users, try equals(users, "id", .text(id)), limit: 1),
                try plan(identities, try equals(identities, "user_id", .text(id)), order: [OrderTerm(column: "created_at")]),
                try plan(factors, try equals(factors, "user_id", .text(id)), order: [OrderTerm(column: "created_at")]))
    }

    /// A user from the results of `userPlans`.
    static func user(_ user: ReadResult, identities: ReadResult, factors: ReadResult) throws(AuthError) -> AuthUser? {
        guard let record = records(user).first else { return nil }
        var found = try AuthUser(record)
        found.identities = try records(identities).map(AuthIdentity.init)
        found.factors = try records(factors).map(MFAFactor.init)
        return found
    }

    /// The user with `id`, their identities and factors.
    func user(id: String) async throws -> AuthUser? {
        let plans = try Self.userPlans(id: id)
        return try await Self.user(try await tx.fetch(plans.user), identities: try await tx.fetch(plans.identities), factors: try await tx.fetch(plans.factors))
    }

    func userID(where column: String, is value: String) async throws -> String? {
        try await first(SystemModule.users, where: column, .text(value))?.text("id")
    }

    func insert(_ table: TableSchema, _ row: RowValues) async throws {
        _ = try await tx.insert([row], into: table, conflict: nil)
    }

    func update(_ table: TableSchema, id: String, key: String = "id", _ values: RowValues) async throws {
        _ = try await tx.update(table, set: values, where: try Self.equals(table, key, .text(id)))
    }

    func delete(_ table: TableSchema, where filter: BoundPredicate) async throws {
        _ = try await tx.delete(from: table, where: filter)
    }

    func addIdentity(userID: String, provider: String, providerID: String, data: JSONValue) async throws {
        try await insert(AuthSchema.identities, RowValues([
            "user_id": .text(userID), "provider": .text(provider), "provider_id": .text(providerID),
            "identity_data": .json(data.jsonText), "last_sign_in_at": .text(now),
        ]))
    }

    // MARK: Sessions

    /// Starts a session: the session row, its first refresh token, the user's `last_sign_in_at`.
    func startSession(userID: String, method: String, nowSeconds: Int64, sessionID: String, refreshToken: String) async throws {
        let amr = JSONValue.array([.object([("method", .string(method)), ("timestamp", .integer(nowSeconds))])])
        try await insert(AuthSchema.sessions, RowValues(["id": .text(sessionID), "user_id": .text(userID), "amr": .json(amr.jsonText), "created_at": .text(now)]))
        try await insert(AuthSchema.refreshTokens, RowValues(["token_hash": .text(Secrets.sha256Hex(refreshToken)), "session_id": .text(sessionID)]))
        try await update(SystemModule.users, id: userID, RowValues(["last_sign_in_at": .text(now)]))
    }

    func session(id: String) async throws -> Record? {
        try await first(AuthSchema.sessions, where: "id", .text(id))
    }
}

import CaravanCore

/// `find_language_matches(p_user_id, p_limit default 20)`: the caller's best language partners.
struct MatchFunctions: Sendable {
    let clock: WallClock

    static let output: [Column] = [
        Column("user_id", .uuid), Column("first_name", .text), Column("age", .integer), Column("location", .text),
        Column("native_language", .text), Column("learning_languages", .textArray), Column("profile_image_url", .text),
        Column("compatibility_score", .integer),
    ]

    var findLanguageMatches: RPCFunction {
        RPCFunction("find_language_matches", parameters: [RPCParameter("p_user_id", .uuid), RPCParameter("p_limit", .integer, default: .integer(20))],
                    readOnly: true) { arguments, tx in
            let caller = try tx.requireCaller("find_language_matches", is: arguments["p_user_id"], parameter: "p_user_id")
            let limit = Int(min(100, max(1, arguments["p_limit"].integerValue ?? 20)))
            let rows = try await tx.asServiceRole { service in try await candidates(of: caller, limit: limit, in: service) }
            return .table(columns: Self.output, rows: rows)
        }
    }

    static let columns = ["id", "first_name", "age", "location", "native_language", "learning_languages", "profile_image_url", "last_active"]

    /// The ranked candidates of `caller`, at most `limit`, as output rows (read as the service role).
    ///
    /// The score splits the candidates into two tiers: both directions (100–110 points) rank above one direction
    /// (50–60), and within a tier the order is `last_active` desc (the activity bonus only grows with it), then id.
    /// So each tier is read in `last_active` order with a `LIMIT` — per native language along the index
    /// (`native_language`, `last_active` desc), stopping once enough are found — instead of scoring every candidate.
    func candidates(of caller: String, limit: Int, in tx: any StoreTransaction) async throws -> [[Value]] {
        let profiles = LanguageExchangeSchema.profiles
        guard let me = try await tx.row(profiles, where: try profiles.equals("id", .text(caller))),
              let native = me.text("native_language"), let learning = me["learning_languages"].textArrayValue else { return [] }
        let base = try await eligibility(of: caller, in: tx)
        let theyLearnMine = BoundPredicate.array(try profiles.requireColumn("learning_languages"), .overlaps, [.text(native)])
        let iLearnTheirs = try profiles.isIn("native_language", learning)
        let scoring = MatchScoring(native: native, learning: Set(learning), now: clock.microseconds)
        var found = try await tier(.and([base, theyLearnMine]), natives: learning, limit: limit, scoring: scoring, in: tx)
        if found.count < limit {
            let rest = limit - found.count
            let one = try await tier(.and([base, .not(theyLearnMine)]), natives: learning, limit: rest, scoring: scoring, in: tx)
                + tier(.and([base, theyLearnMine, .not(iLearnTheirs)]), natives: nil, limit: rest, scoring: scoring, in: tx)
            found += one.sorted { MatchScoring.precedes($0.key, $1.key) }.prefix(rest)
        }
        let top = found.map(\.row)
        let hidden = try await locationsHidden(of: top.compactMap { $0[0].textValue }, in: tx)
        return top.map { row in
            var row = row
            if let id = row[0].textValue, hidden.contains(id) { row[3] = .null }
            return row
        }
    }

    /// Who may be proposed at all: not the caller, not excluded (`excluded`), and inside the caller's age
    /// range (an unknown age is not outside it).
    func eligibility(of caller: String, in tx: any StoreTransaction) async throws -> BoundPredicate {
        let profiles = LanguageExchangeSchema.profiles
        let preferences = try await tx.row(LanguageExchangeSchema.userPreferences, where: try LanguageExchangeSchema.userPreferences.equals("user_id", .text(caller)))
        let ageColumn = try profiles.requireColumn("age")
        let minAge = preferences?["min_age"].integerValue ?? 18
        let maxAge = preferences?["max_age"].integerValue ?? 99
        return .and([
            .not(try excluded(caller)),
            .or([.isNull(ageColumn), .and([.compare(ageColumn, .gte, .integer(minAge)), .compare(ageColumn, .lte, .integer(maxAge))])]),
        ])
    }

    /// The caller, everyone they have a match row with (either order), have swiped, block or are blocked by — as
    /// semi-joins of the candidate read itself (no round trip per list).
    func excluded(_ caller: String) throws -> BoundPredicate {
        let s = LanguageExchangeSchema.self
        let id = try s.profiles.requireColumn("id")
        func others(_ table: TableSchema, _ mine: String, _ theirs: String) throws -> BoundPredicate {
            .inSubquery(id, table, selecting: try table.requireColumn(theirs), where: try table.equals(mine, .text(caller)))
        }
        return .or([
            .compare(id, .eq, .text(caller)),
            try others(s.matches, "user1_id", "user2_id"), try others(s.matches, "user2_id", "user1_id"),
            try others(s.swipes, "swiper_id", "swiped_id"),
            try others(s.blocks, "blocker_id", "blocked_id"), try others(s.blocks, "blocked_id", "blocker_id"),
        ])
    }

    typealias Ranked = (key: (score: Int64, lastActive: Int64?, id: String), row: [Value])

    /// The first `limit` profiles matching `filter` in the design's order, read per native language of `natives`
    /// (nil: any): the active ones in `last_active` order, then, if too few, the never-active ones by id.
    func tier(_ filter: BoundPredicate, natives: [String]?, limit: Int, scoring: MatchScoring, in tx: any StoreTransaction) async throws -> [Ranked] {
        let profiles = LanguageExchangeSchema.profiles
        let lastActive = try profiles.requireColumn("last_active")
        var rows: [[Value]] = []
        for language in natives.map({ $0.map(Optional.some) }) ?? [nil] {
            let scope = try language.map { [try profiles.equals("native_language", .text($0))] } ?? []
            // No NULLs here, so their placement changes nothing but the plan: `DESC NULLS FIRST` is the index's own
            // order on PostgreSQL (SQLite walks its index either way).
            let active = try await tx.rows(profiles, Self.columns, where: .and(scope + [filter, .not(.isNull(lastActive))]),
                                     order: [OrderTerm(column: "last_active", direction: .descending, nulls: .first), OrderTerm(column: "id")], limit: limit)
            rows += active
            if active.count < limit {
                rows += try await tx.rows(profiles, Self.columns, where: .and(scope + [filter, .isNull(lastActive)]), order: [OrderTerm(column: "id")], limit: limit - active.count)
            }
        }
        let ranked = rows.compactMap { row -> Ranked? in
            guard let id = row[0].textValue, let candidateNative = row[4].textValue else { return nil }
            let lastActive = row[7].textValue.flatMap(Timestamp.parseMicroseconds)
            guard let score = scoring.score(native: candidateNative, learning: row[5].textArrayValue ?? [], lastActive: lastActive) else { return nil }
            return ((score, lastActive, id), Array(row[0..<7]) + [.integer(score)])
        }
        return Array(ranked.sorted { MatchScoring.precedes($0.key, $1.key) }.prefix(limit))
    }

    /// The users of `ids` whose `privacy_settings.show_location` is false.
    func locationsHidden(of ids: [String], in tx: any StoreTransaction) async throws -> Set<String> {
        let preferences = LanguageExchangeSchema.userPreferences
        var hidden = Set<String>()
        for row in try await tx.rows(preferences, ["user_id", "privacy_settings"], where: try preferences.isIn("user_id", ids)) {
            let showLocation = row[1].jsonObject?.first { $0.key == "show_location" }?.value
            if showLocation == .bool(false), let id = row[0].textValue { hidden.insert(id) }
        }
        return hidden
    }
}

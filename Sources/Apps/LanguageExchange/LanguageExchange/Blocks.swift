import CaravanCore

/// Keeps `blocks` equal to the `blocked_users` of each `user_preferences` row, which it stores canonically (each a
/// UUID, lowercase, once, never the user themself: 23514 naming the element).
enum Blocks {
    static func afterWrite(_ write: RowWrite, _ tx: any StoreTransaction) async throws {
        let blocks = LanguageExchangeSchema.blocks
        if let old = write.old {
            _ = try await tx.delete(from: blocks, where: try blocks.equals("blocker_id", old["user_id"]))
        }
        guard let new = write.new, let user = new.text("user_id") else { return }
        guard let listed = new["blocked_users"].textArrayValue else {
            throw Failure.check("user_preferences.blocked_users", "must be an array of user ids")
        }
        var blocked: [String] = []
        for (index, raw) in listed.enumerated() {
            guard let id = ColumnType.canonicalUUID(raw) else {
                throw Failure.check("user_preferences.blocked_users[\(index)]", "not a user id", value: raw)
            }
            guard id != user else { throw Failure.check("user_preferences.blocked_users[\(index)]", "a user cannot block themself") }
            if !blocked.contains(id) { blocked.append(id) }
        }
        if blocked != listed {
            // Stored canonically (lowercase, each once); the rewrite's own hook then records the pairs.
            let preferences = LanguageExchangeSchema.userPreferences
            _ = try await tx.update(preferences, set: RowValues(["blocked_users": ColumnType.textArray(blocked)]), where: try preferences.equals("user_id", .text(user)))
            return
        }
        guard !blocked.isEmpty else { return }
        _ = try await tx.insert(blocked.map { RowValues(["blocker_id": .text(user), "blocked_id": .text($0)]) }, into: blocks, conflict: nil)
    }

    /// Whether either of `a` and `b` blocks the other.
    static func blocked(_ a: String, _ b: String, in tx: any StoreTransaction) async throws -> Bool {
        let blocks = LanguageExchangeSchema.blocks
        let pair = BoundPredicate.or([
            try blocks.matching(["blocker_id": .text(a), "blocked_id": .text(b)]),
            try blocks.matching(["blocker_id": .text(b), "blocked_id": .text(a)]),
        ])
        return try await tx.asServiceRole { try await $0.count(blocks, where: pair) } > 0
    }
}

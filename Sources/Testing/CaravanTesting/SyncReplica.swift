package import CaravanCore
package import CaravanSync

/// A device's copy of pulled tables, built only from pull pages (upserts, deletes, evictions), as a client keeps it.
package struct SyncReplica: Sendable, Equatable {
    /// Table → primary key JSON → the row's members.
    package private(set) var tables: [String: [String: [String: JSONValue]]] = [:]
    package private(set) var cursor: String?

    package init() {}

    /// The non-empty tables (a table that lost its last row equals one that never had any).
    package var rows: [String: [String: [String: JSONValue]]] { tables.filter { !$0.value.isEmpty } }

    package static func == (a: SyncReplica, b: SyncReplica) -> Bool { a.rows == b.rows }

    package mutating func apply(_ page: PullPage) throws {
        for change in page.changes {
            switch change.operation {
            case .upsert:
                tables[change.table, default: [:]][change.keyJSON] = try Self.members(change.recordJSON ?? "{}")
            case .delete:
                tables[change.table]?[change.keyJSON] = nil
            case .evict:
                let wanted = try Self.members(change.keyJSON)
                tables[change.table] = tables[change.table]?.filter { _, row in !wanted.allSatisfy { row[$0.key] == $0.value } }
            }
        }
        cursor = page.cursor.encoded
    }

    /// Pulls until `has_more` is false from the replica's cursor (a snapshot when it has none).
    package mutating func pull(_ puller: SyncPuller, as identity: Identity, tables: String, filters: [QueryString.Pair] = [], limit: Int = 1_000) async throws {
        while true {
            let page = try await puller.pull(as: identity, tables: tables, filters: filters, cursor: cursor, limit: limit)
            try apply(page)
            if !page.hasMore { return }
        }
    }

    /// A fresh snapshot of `tables` by `identity`: the oracle a replica built from deltas must equal.
    package static func snapshot(_ puller: SyncPuller, as identity: Identity, tables: String, filters: [QueryString.Pair] = []) async throws -> SyncReplica {
        var replica = SyncReplica()
        try await replica.pull(puller, as: identity, tables: tables, filters: filters)
        return replica
    }

    /// How many rows the replica holds of `table`.
    package func count(_ table: String) -> Int { tables[table]?.count ?? 0 }

    static func members(_ json: String) throws -> [String: JSONValue] {
        guard case .object(let pairs) = try JSONParser.parse(json) else { return [:] }
        return Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}

import CaravanCore
import CaravanTesting
import CaravanSync
import Foundation
import Places
import Testing

/// A store with the places module, a pipeline, a puller and a pusher, as the server wires them.
struct SyncFixture {
    static let userA = "aaaaaaaa-0000-4000-8000-00000000000a"
    static let userB = "bbbbbbbb-0000-4000-8000-00000000000b"

    let store: any Store
    let catalog: Catalog
    let pipeline: WritePipeline
    let puller: SyncPuller
    let pusher: SyncPusher

    static func make(_ engine: Engine) async throws -> SyncFixture {
        let catalog = Catalog(modules: [SystemModule.module, PlacesModule.module])
        let store = try await engine.makeStore(migrations: catalog.migrations)
        let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
        let pusher = SyncPusher(pipeline: pipeline, catalog: catalog) { error, _ in
            .object([("code", .string("\(error.code)")), ("message", .string(error.message)), ("details", .null), ("hint", .null)])
        }
        let fixture = SyncFixture(store: store, catalog: catalog, pipeline: pipeline, puller: SyncPuller(store: store, catalog: catalog), pusher: pusher)
        try await fixture.asService { tx in
            _ = try await tx.insert([userA, userB].map { RowValues(["id": .text($0)]) }, into: SystemModule.users, conflict: nil)
        }
        return fixture
    }

    func asService(_ body: @escaping @Sendable (any StoreTransaction) async throws -> Void) async throws {
        try await pipeline.run(catalog.access(for: .serviceRole), body)
    }

    static func place(_ id: String, active: Bool = true) -> RowValues {
        RowValues(["id": .text(id), "name_ar": .text("مكان \(id)"), "name_en": .text("Place \(id)"), "category": .text("cafe"),
                   "category_ar": .text("مقهى"), "is_active": .bool(active)])
    }

    static func user(_ id: String) -> Identity {
        Identity(role: .authenticated, userID: id, claims: .object([("sub", .string(id)), ("role", .string("authenticated"))]))
    }

    /// Pulls until `has_more` is false, applying each change to `replica` (table → key JSON → record JSON).
    func pullAll(as identity: Identity, tables: String, from cursor: SyncCursor?, limit: Int, into replica: inout [String: [String: String]]) async throws -> (SyncCursor, pages: [[PulledChange]]) {
        var cursor = cursor
        var pages: [[PulledChange]] = []
        while true {
            let page = try await puller.pull(as: identity, tables: tables, cursor: cursor?.encoded, limit: limit)
            pages.append(page.changes)
            for change in page.changes {
                switch change.operation {
                case .upsert: replica[change.table, default: [:]][change.keyJSON] = change.recordJSON
                case .delete: replica[change.table, default: [:]][change.keyJSON] = nil
                case .evict: Issue.record("the places tables' policies read no other table: nothing to evict")
                }
            }
            cursor = page.cursor
            if !page.hasMore { return (page.cursor, pages) }
        }
    }

    /// What `identity` may read of `table` now, as key JSON → record JSON.
    func visibleRows(_ table: TableSchema, as identity: Identity) async throws -> [String: String] {
        let rule = try catalog.access(for: identity).readRule(table)
        let result = try await store.fetch(try ReadPlan(table: table, query: Query(), access: rule, maxRows: nil, includeCount: false))
        var rows: [String: String] = [:]
        let names = table.columns.map(\.name)
        let keys = table.primaryKey.compactMap { table.position(of: $0) }
        for row in result.rows {
            rows[Self.object(keys.map { row[$0] }, names: table.primaryKey)] = Self.object(row, names: names)
        }
        return rows
    }

    static func object(_ values: [Value], names: [String]) -> String {
        var writer = JSONWriter()
        writer.write(JSONValue.object(zip(names, values).map { ($0, JSONValue($1)) }))
        return writer.string
    }
}

@Suite("Sync cursors and push bodies")
struct SyncWireTests {
    @Test func cursorsRoundTrip() throws {
        for position in [SyncCursor.Position.log(seq: 42), .snapshot(start: 7, table: 1, lastKey: [.string("kudu"), .integer(3)]),
                         .snapshot(start: 0, table: 0, lastKey: nil)] {
            let cursor = SyncCursor(epoch: "e1", scope: 0xdead_beef_0123_4567, position: position)
            #expect(try SyncCursor.decode(cursor.encoded) == cursor)
            #expect(!cursor.encoded.contains("+") && !cursor.encoded.contains("/") && !cursor.encoded.contains("="))
        }
    }

    @Test(arguments: ["", "!!!", "bm90IGpzb24", "eyJ2IjoyLCJlIjoiYSIsImgiOiIxIiwicyI6MX0", "eyJ2IjoxLCJlIjoiYSIsImgiOiIxIiwicyI6LTF9",
                      String(repeating: "A", count: 5000)])
    func malformedCursorsMustRefetch(_ text: String) {
        #expect(throws: CaravanError.self) { try SyncCursor.decode(text) }
        do {
            _ = try SyncCursor.decode(text)
        } catch {
            #expect(error.code == .mustRefetch)
        }
    }

    @Test func scopesDifferByCallerAndTables() {
        let a = SyncCursor.scope(of: SyncFixture.user(SyncFixture.userA), tables: ["places", "favorites"])
        #expect(a == SyncCursor.scope(of: SyncFixture.user(SyncFixture.userA), tables: ["places", "favorites"]))
        #expect(a != SyncCursor.scope(of: SyncFixture.user(SyncFixture.userB), tables: ["places", "favorites"]))
        #expect(a != SyncCursor.scope(of: SyncFixture.user(SyncFixture.userA), tables: ["favorites", "places"]))
        #expect(a != SyncCursor.scope(of: Identity(role: .anon), tables: ["places", "favorites"]))
    }

    @Test(arguments: [
        #"[]"#, #"{"mutations":{}}"#, #"{"mutations":[1]}"#, #"{"mutations":[{"id":"nope","table":"t","op":"insert"}]}"#,
        #"{"mutations":[{"id":"0d2e2a4e-8d7a-4c1e-9f65-1f5d8a0b6c11","table":"t","op":"merge"}]}"#,
        #"{"mutations":[{"id":"0d2e2a4e-8d7a-4c1e-9f65-1f5d8a0b6c11","table":"t","op":"insert","record":[1]}]}"#,
        #"{"client_id":5,"mutations":[]}"#,
        #"{"mutations":[{"id":"0d2e2a4e-8d7a-4c1e-9f65-1f5d8a0b6c11","table":"t","op":"delete","key":{}},{"id":"0D2E2A4E-8D7A-4C1E-9F65-1F5D8A0B6C11","table":"t","op":"delete","key":{}}]}"#,
    ])
    func badPushBodiesAreMalformed(_ body: String) {
        do {
            _ = try PushBatch(bytes: Array(body.utf8))
            Issue.record("accepted \(body)")
        } catch {
            #expect(error.code == .malformedBody)
        }
    }

    @Test func tooManyMutationsIsTooLarge() {
        let one = #"{"id":"%@","table":"favorites","op":"delete","key":{"id":"x"}}"#
        let items = (0...PushBatch.maximumMutations).map { _ in one.replacingOccurrences(of: "%@", with: UUID().uuidString) }
        do {
            _ = try PushBatch(bytes: Array(#"{"mutations":[\#(items.joined(separator: ","))]}"#.utf8))
            Issue.record("accepted \(items.count) mutations")
        } catch {
            #expect(error.code == .payloadTooLarge)
        }
    }

    @Test func durationsParse() {
        #expect(ChangeLogRetention.parseDuration("7d") == .seconds(604_800))
        #expect(ChangeLogRetention.parseDuration("15m") == .seconds(900))
        #expect(ChangeLogRetention.parseDuration("30") == .seconds(30))
        #expect(ChangeLogRetention.parseDuration("-1s") == nil)
        #expect(ChangeLogRetention.parseDuration("1w") == nil)
    }
}

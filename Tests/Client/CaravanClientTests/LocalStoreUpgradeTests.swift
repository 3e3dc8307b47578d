@testable import CaravanClient
import CaravanCore
import Foundation
import Places
import Synchronization
import Testing

/// Version 1 and version 2 of an app's declarations as a device sees them: version 2 adds `places.rating_count`
/// (default 0) and the `reviews` table, and renames `favorites.comment` to `note`.
enum DeviceSchema {
    static let v2: [TableSchema] = PlacesModule.module.tables.filter(\.isSynced).map { table in
        guard table.name == "favorites" else { return table }
        return copy(table, columns: table.columns.map { $0.name == "note" ? Column("note", .text, renamedFrom: "comment") : $0 })
    }

    static let v1: [TableSchema] = v2.filter { $0.name != "reviews" }.map { table in
        switch table.name {
        case "favorites": copy(table, columns: table.columns.map { $0.name == "note" ? Column("comment", .text) : $0 })
        case "places": copy(table, columns: table.columns.filter { $0.name != "rating_count" })
        default: table
        }
    }

    static func copy(_ table: TableSchema, columns: [Column]) -> TableSchema {
        TableSchema(table.name, columns: columns, primaryKey: table.primaryKey, uniques: table.uniques, foreignKeys: table.foreignKeys,
                    checks: table.checks, indexes: table.indexes, exposure: table.exposure, search: table.search, synced: table.isSynced,
                    owner: table.owner, participants: table.participants, exportCard: table.exportCard)
    }
}

@Suite("A new app over an old store")
struct LocalStoreUpgradeTests {
    static let favoriteID = "0b7f3c1e-2f4a-4c9b-8d1e-000000000001"

    static func place(_ id: String) -> JSONValue {
        .object([("id", .string(id)), ("name_ar", .string("مكان")), ("category", .string("cafe")), ("category_ar", .string("مقهى"))])
    }

    @Test func newerDeclarationsMigrateTheStoreInPlaceAndKeepTheOutbox() throws {
        let directory = NSTemporaryDirectory() + "caravan-upgrade-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/client.sqlite"
        let key = JSONValue.object([("id", .string(Self.favoriteID))])
        do {
            let old = try LocalStore(path: path, tables: DeviceSchema.v1)
            let pulledFavorite = JSONValue.object([("id", .string(Self.favoriteID)), ("user_id", .string(Fixture.user)), ("place_id", .string("kudu")),
                                                   ("comment", .string("pulled"))])
            _ = try old.apply(PullReply(changes: [
                PulledRow(seq: 1, table: "places", operation: .upsert, key: .object([("id", .string("kudu"))]), record: Self.place("kudu")),
                PulledRow(seq: 1, table: "places", operation: .upsert, key: .object([("id", .string("gone"))]), record: Self.place("gone")),
                PulledRow(seq: 1, table: "favorites", operation: .upsert, key: key, record: pulledFavorite),
            ], cursor: "c1", hasMore: false), scope: ["places", "favorites"], now: 0)
            try old.insert("favorites", .object([("user_id", .string(Fixture.user)), ("place_id", .string("olaya")), ("comment", .string("waiting"))]),
                           now: Fixture.now)
            try old.update("favorites", key: key, .object([("comment", .string("edited"))]), now: Fixture.now)
            #expect(try old.tablesToRefetch().isEmpty, "a store made from its declarations has nothing to pull again")
        }

        let store = try LocalStore(path: path, tables: DeviceSchema.v2)
        // The rename kept the values; the new column has its default; the new table is there, empty.
        let favorites = try store.rows("favorites")
        #expect(Set(favorites.compactMap { if case .string(let note)? = $0["note"] { note } else { nil } }) == ["edited", "waiting"])
        #expect(favorites.allSatisfy { $0["comment"] == nil })
        #expect(try store.rows("places", where: [("id", .string("kudu"))]).first?["rating_count"] == .integer(0))
        #expect(try store.rows("reviews").isEmpty)
        // The waiting writes name the column by its new name.
        let outbox = try store.outbox()
        #expect(outbox.count == 2 && outbox.allSatisfy { $0.state == .pending })
        #expect(outbox.compactMap { $0.record?["note"] } == [.string("waiting"), .string("edited")])
        #expect(outbox.allSatisfy { $0.record?["comment"] == nil })
        // The changed tables are to be pulled again; the cursor stays (they are pulled alone).
        #expect(try store.tablesToRefetch() == ["places", "favorites"])
        #expect(try store.syncState(tables: ["places", "favorites"]).cursor == "c1")

        // Opened again with the same declarations: nothing more to do.
        let reopened = try LocalStore(path: path, tables: DeviceSchema.v2)
        #expect(try reopened.tablesToRefetch() == ["places", "favorites"] && (try reopened.outbox().count) == 2)

        // The re-pull replaces the tables' rows, but those with writes waiting; the marks go.
        var kudu = Self.place("kudu")
        if case .object(var pairs) = kudu { pairs.append(("rating_count", .integer(120))); kudu = .object(pairs) }
        _ = try reopened.apply(PullReply(changes: [PulledRow(seq: 5, table: "places", operation: .upsert, key: .object([("id", .string("kudu"))]), record: kudu)],
                                         cursor: "c2", hasMore: false),
                               scope: ["places", "favorites"], refetchingTables: ["places", "favorites"], now: 0)
        #expect(try reopened.rows("places").map { $0["id"] } == [.string("kudu")], "the place the server no longer sends is gone")
        #expect(try reopened.rows("places").first?["rating_count"] == .integer(120))
        #expect(try reopened.rows("favorites").count == 2, "rows with writes waiting stay")
        #expect(try reopened.tablesToRefetch().isEmpty)
        #expect(try LocalStore(path: path, tables: DeviceSchema.v2).tablesToRefetch().isEmpty)
    }

    @Test func aRenamedKeyColumnRenamesTheWaitingWritesKeys() throws {
        let path = NSTemporaryDirectory() + "caravan-upgrade-" + UUID().uuidString + ".sqlite"
        let v1 = TableSchema("notes", columns: [Column("code", .text, nullable: false), Column("body", .text)], primaryKey: ["code"], synced: true)
        let v2 = TableSchema("notes", columns: [Column("slug", .text, nullable: false, renamedFrom: "code"), Column("body", .text)],
                             primaryKey: ["slug"], synced: true)
        do {
            let old = try LocalStore(path: path, tables: [v1])
            try old.insert("notes", .object([("code", .string("a")), ("body", .string("first"))]), now: Fixture.now)
            try old.update("notes", key: .object([("code", .string("a"))]), .object([("body", .string("second"))]), now: Fixture.now)
        }
        let store = try LocalStore(path: path, tables: [v2])
        #expect(try store.rows("notes") == [.object([("slug", .string("a")), ("body", .string("second"))])])
        let outbox = try store.outbox()
        #expect(outbox.map(\.key) == [.object([("slug", .string("a"))]), .object([("slug", .string("a"))])])
        #expect(outbox.map(\.rowKey) == Array(repeating: #"{"slug":"a"}"#, count: 2))
        #expect(outbox.first?.record?["slug"] == .string("a") && outbox.first?.record?["code"] == nil)
        // The local write path finds the row under its new key.
        try store.update("notes", key: .object([("slug", .string("a"))]), .object([("body", .string("third"))]), now: Fixture.now)
    }

    @Test func aServerThatIgnoresRefetchGetsAWholePull() async throws {
        let directory = NSTemporaryDirectory() + "caravan-upgrade-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/client.sqlite"
        do {
            let old = try LocalStore(path: path, tables: DeviceSchema.v1)
            _ = try old.apply(PullReply(changes: [PulledRow(seq: 1, table: "places", operation: .upsert, key: .object([("id", .string("gone"))]),
                                                            record: Self.place("gone"))], cursor: "c1", hasMore: false),
                              scope: ["places", "favorites"], now: 0)
        }
        let store = try LocalStore(path: path, tables: DeviceSchema.v2)
        let server = OlderServer(snapshot: Self.place("kudu"))
        let api = CaravanAPI(baseURL: "http://older", apiKey: "anon", transport: server)
        let engine = SyncEngine(store: store, api: api, session: SessionManager(store: store, api: api, now: { 0 }), now: { 0 })
        _ = try await engine.sync(tables: ["places", "favorites"])
        let urls = server.urls.withLock { $0 }
        #expect(urls.count == 2 && urls[0].hasSuffix("cursor=c1&refetch=places,favorites") && !urls[1].contains("cursor="), "\(urls)")
        #expect(try store.rows("places").map { $0["id"] } == [.string("kudu")])
        #expect(try store.syncState(tables: ["places", "favorites"]).cursor == "snapshot")
        #expect(try store.tablesToRefetch().isEmpty)
    }
}

/// A server from before `refetch=`: it goes on from the cursor (nothing new) and never says `refetched`.
final class OlderServer: HTTPTransport {
    let snapshot: JSONValue
    let urls = Mutex<[String]>([])

    init(snapshot: JSONValue) { self.snapshot = snapshot }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        urls.withLock { $0.append(request.url) }
        let changes: [JSONValue] = request.url.contains("cursor=") ? [] : [
            .object([("seq", .integer(9)), ("table", .string("places")), ("op", .string("upsert")), ("key", .object([("id", snapshot["id"] ?? .null)])),
                     ("record", snapshot)]),
        ]
        let body = JSONValue.object([("changes", .array(changes)), ("cursor", .string(request.url.contains("cursor=") ? "after" : "snapshot")),
                                     ("has_more", .bool(false))])
        return TransportResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(body.jsonText.utf8))
    }
}

import CaravanCore
import CaravanTesting
import CaravanPostgres
import Foundation
import Places
import Testing

/// `places_search` (places-0003-search-postgres): built from the rows already there when the migration runs, then
/// kept by its trigger through inserts, renames of the key, updates of indexed columns and deletes.
@Suite("Postgres search table follows places")
struct PostgresSearchIndexTests {
    private func keys(_ store: PostgresStore, matching token: String) async throws -> [String] {
        try await store.unsafeRows("""
            SELECT "caravan_key" FROM "places_search" WHERE "caravan_document" @@ caravan_query_term('\(token)', false) ORDER BY 1
            """).compactMap { $0[0] }
    }

    @Test func backfillsThenFollowsWrites() async throws {
        let store = try await Engine.makePostgresStore()
        let migrations = SystemModule.migrations + PlacesModule.module.migrations
        // (system-0007 redefines the search functions places-0003 creates; on a deployment it runs after places-0003.)
        _ = try await store.migrate(migrations.filter { !["places-0003-search-postgres", "places-0004-search-plans", "system-0007-search-functions"].contains($0.id) })
        _ = try await store.unsafeRows("""
            INSERT INTO "places" ("id", "name_ar", "name_en", "category", "category_ar", "tags", "latitude", "longitude")
            VALUES ('a', 'مقهى الأندلس', 'Andalus Bakeriés', 'cafe', 'مقهى', ARRAY['wifi'], 24.7, 46.7)
            """)
        #expect(try await store.migrate(migrations) == ["places-0003-search-postgres", "places-0004-search-plans", "system-0007-search-functions"])
        #expect(try await keys(store, matching: "الاندلس") == ["a"], "backfilled, folded")
        #expect(try await keys(store, matching: "bakery") == ["a"], "folded and stemmed: bakeriés → bakeri")
        #expect(try await keys(store, matching: "wifi") == ["a"], "tags")

        _ = try await store.unsafeRows(#"UPDATE "places" SET "id" = 'b', "name_en" = 'Orchard' WHERE "id" = 'a'"#)
        #expect(try await keys(store, matching: "bakeries") == [])
        #expect(try await keys(store, matching: "orchard") == ["b"])
        _ = try await store.unsafeRows(#"UPDATE "places" SET "latitude" = 24.8, "longitude" = 46.8 WHERE "id" = 'b'"#)
        let coordinates = try await store.unsafeRows(#"SELECT "caravan_latitude"::text, "caravan_longitude"::text FROM "places_search""#)
        #expect(coordinates == [["24.8", "46.8"]])
        _ = try await store.unsafeRows(#"DELETE FROM "places" WHERE "id" = 'b'"#)
        #expect(try await store.unsafeRows(#"SELECT count(*)::text FROM "places_search""#) == [["0"]])
    }

    /// The phrase of two columns never matches across them: each column's positions start past the previous one's.
    @Test func phrasesStayInsideOneColumn() async throws {
        let store = try await Engine.makePostgresStore()
        _ = try await store.migrate(SystemModule.migrations + PlacesModule.module.migrations)
        _ = try await store.unsafeRows("""
            INSERT INTO "places" ("id", "name_ar", "name_en", "category", "category_ar") VALUES ('a', 'x', 'Blue', 'cafe', 'y')
            """)
        let across = try await store.unsafeRows("""
            SELECT count(*)::text FROM "places_search" WHERE "caravan_document" @@ tsquery_phrase(caravan_query_term('blue', false), caravan_query_term('cafe', false))
            """)
        #expect(across == [["0"]])
    }
}

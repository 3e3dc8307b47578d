import CaravanCore
import CaravanTesting
import CaravanPostgres
import CaravanSQL
import CaravanSQLite
import Foundation
import Places
import Testing

/// Search declared by an app (`TableSchema.search`) and rendered per engine by the migration: full text with the
/// folding tokenizer, trigrams, a geo point, filled from existing rows and kept in step with every write.
@Suite struct DeclaredSearchTests {
    static let notes = TableSchema(
        "field_notes",
        columns: [
            Column("id", .uuid, nullable: false),
            Column("title", .text, nullable: false),
            Column("body", .text),
            Column("tags", .textArray),
            Column("lat", .double),
            Column("lng", .double),
        ],
        primaryKey: ["id"],
        search: SearchIndexes(fullText: [("title", 3), ("body", 1), ("tags", 1)], fuzzy: ["title"],
                              geo: .init(latitude: "lat", longitude: "lng"))
    )
    static let migration = Migration(id: "field-notes-0001", changes: [.createTable(notes)])

    static let cafe = "00000000-0000-4000-8000-000000000001"
    static let museum = "00000000-0000-4000-8000-000000000002"
    static let market = "00000000-0000-4000-8000-000000000003"

    private func row(_ id: String, _ title: String, _ body: String?, tags: [String] = [], at point: (Double, Double)?) -> RowValues {
        RowValues(columns: ["id", "title", "body", "tags", "lat", "lng"],
                  values: [.text(id), .text(title), body.map(Value.text) ?? .null,
                           .json(JSONValue.array(tags.map(JSONValue.string)).jsonText),
                           point.map { .double($0.0) } ?? .null, point.map { .double($0.1) } ?? .null])
    }

    private func ids(_ store: any Store, _ ranking: RankedSearch.Ranking) async throws -> [String] {
        let outputs = [try Self.notes.requireColumn("id")]
        let hits = try await store.readOnly(Catalog(modules: [SystemModule.module]).access(for: .serviceRole)) { tx in
            try await tx.rankedFetch(RankedSearch(table: Self.notes, ranking: ranking, filter: .constant(true), outputs: outputs, limit: 10))
        }
        return hits.map { if case .text(let id) = $0.values[0] { id } else { "?" } }
    }

    /// The declaration of `places` renders, for SQLite, exactly the search migration written by hand before search
    /// could be declared (`places-0002-search`): the renderer is that file, generalized.
    @Test func placesDeclarationRendersTheHandWrittenSQLiteSearchMigration() throws {
        let frozen = try #require(PlacesMigrations.all.first { $0.id == "places-0002-search" }?.sql[.sqlite])
        let rendered = try SQLSchema<SQLiteSyntax>.render([.createSearch(PlacesSchema.places)])
        #expect(rendered.trimmingCharacters(in: .newlines) == frozen.trimmingCharacters(in: .newlines))
    }

    /// On PostgreSQL the search table is keyed by the table's own key type, the document weights follow the
    /// declared weights (A highest), array columns are joined, and the trigger watches exactly the indexed columns.
    @Test func postgresRendersTheSearchTableEntryAndTrigger() throws {
        let statements = try SQLSchema<PostgresSyntax>.createSearch(Self.notes)
        #expect(statements[0].contains(#""caravan_key" uuid NOT NULL PRIMARY KEY"#))
        #expect(statements[1].contains(#"caravan_tsvector(p."title", 'A')"#))
        #expect(statements[1].contains(#"caravan_tsvector(p."body", 'B')"#))
        #expect(statements[1].contains(#"caravan_tsvector(array_to_string(p."tags", ' '), 'B')"#))
        #expect(statements[1].contains(#"caravan_fold(COALESCE(p."title", ''))"#))
        #expect(statements[1].contains(#"p."lat"::float8, p."lng"::float8"#))
        #expect(statements[3] == #"CREATE TRIGGER "field_notes_search_sync" AFTER INSERT OR DELETE OR UPDATE OF "id", "title", "body", "tags", "lat", "lng" ON "field_notes" FOR EACH ROW EXECUTE FUNCTION "field_notes_search_sync"()"#)
        #expect(statements.suffix(3) == [
            #"CREATE INDEX "field_notes_search_document" ON "field_notes_search" USING gin ("caravan_document")"#,
            #"CREATE INDEX "field_notes_search_fuzzy" ON "field_notes_search" USING gin ("caravan_fuzzy" gin_trgm_ops)"#,
            #"CREATE INDEX "field_notes_search_geo" ON "field_notes_search" ("caravan_latitude", "caravan_longitude")"#,
        ])
    }

    /// A declaration the engines cannot index is refused with a message naming the column.
    @Test func searchOverUnfitColumnsIsRefused() throws {
        let numeric = TableSchema("scores", columns: [Column("id", .text, nullable: false), Column("points", .integer)], primaryKey: ["id"],
                                  search: SearchIndexes(fullText: [("points", 1)]))
        #expect(throws: CaravanError.self) { try SQLSchema<SQLiteSyntax>.render([.createSearch(numeric)]) }
        let noKey = TableSchema("pairs", columns: [Column("a", .text, nullable: false), Column("b", .text, nullable: false)],
                                primaryKey: ["a", "b"], search: SearchIndexes(fullText: [("a", 1)]))
        do {
            _ = try SQLSchema<PostgresSyntax>.createSearch(noKey)
            Issue.record("a composite key was accepted")
        } catch let error as CaravanError {
            #expect(error.message.contains("pairs") && error.message.contains("single-column primary key"))
        }
    }

    /// Rows written before and after the search objects exist are found by full text (folded: hamza, tashkeel and
    /// case do not matter; English words are stemmed), by trigram similarity (typos) and by distance; updates and
    /// deletes move them.
    @Test(arguments: Engine.allCases)
    func declaredSearchFindsRowsAndFollowsWrites(engine: Engine) async throws {
        // The table first, its rows, then the search declared by a later migration: the fill covers existing rows.
        let plain = TableSchema("field_notes", columns: Self.notes.columns, primaryKey: ["id"])
        let store = try await engine.makeStore(migrations: [Migration(id: "field-notes-0001", changes: [.createTable(plain)])])
        let catalog = Catalog(modules: [SystemModule.module, AppModule(name: "field_notes", tables: [Self.notes], migrations: [])])
        let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
        _ = try await pipeline.run(catalog.access(for: .serviceRole)) { tx in
            try await tx.insert([self.row(Self.cafe, "مقهى أَلْوَرْد", "Coffee roasters near the park", tags: ["coffee"], at: (24.7136, 46.6753))],
                          into: Self.notes, conflict: nil)
        }
        _ = try await store.migrate(SystemModule.migrations + [Migration(id: "field-notes-0001", changes: [.createTable(plain)]),
                                                               Migration(id: "field-notes-0002-search", changes: [.createSearch(Self.notes)])])
        _ = try await pipeline.run(catalog.access(for: .serviceRole)) { tx in
            try await tx.insert([self.row(Self.museum, "National Museum", "History galleries", tags: ["history", "museums"], at: (24.6477, 46.7103)),
                           self.row(Self.market, "Souq Al Zal", nil, tags: ["market"], at: nil)],
                          into: Self.notes, conflict: nil)
        }

        // Full text: folded Arabic (no hamza, no tashkeel), stemmed English, array tags.
        #expect(try await ids(store, .fullText(.allTokens(of: "مقهى الورد"), boost: nil)) == [Self.cafe])
        #expect(try await ids(store, .fullText(.allTokens(of: "roaster"), boost: nil)) == [Self.cafe])
        #expect(try await ids(store, .fullText(.allTokens(of: "museum"), boost: nil)) == [Self.museum])
        // A title match (weight 3) outranks a body match (weight 1).
        _ = try await pipeline.run(catalog.access(for: .serviceRole)) { tx in
            try await tx.update(Self.notes, set: RowValues(columns: ["body"], values: [.text("Old coffee stall")]),
                          where: .compare(try Self.notes.requireColumn("id"), .eq, .text(Self.market)))
        }
        #expect(try await ids(store, .fullText(.allTokens(of: "coffee"), boost: nil)) == [Self.cafe, Self.market])
        // Trigrams: a typo in the title.
        #expect(try await ids(store, .similarity("Nationl Musem", minimum: 0.3, boost: nil)).first == Self.museum)
        // Geo: within 2 km of the cafe, the museum (about 7.9 km away) is not; the market has no point.
        #expect(try await ids(store, .distance(latitude: 24.7136, longitude: 46.6753, radiusMeters: 2_000)) == [Self.cafe])
        #expect(try await ids(store, .distance(latitude: 24.7136, longitude: 46.6753, radiusMeters: 10_000)) == [Self.cafe, Self.museum])

        // Updates move the row in every index; deletes remove it.
        _ = try await pipeline.run(catalog.access(for: .serviceRole)) { tx in
            let id = try Self.notes.requireColumn("id")
            _ = try await tx.update(Self.notes, set: RowValues(columns: ["title", "lat", "lng"], values: [.text("Kingdom Tower"), .double(24.7114), .double(46.6744)]),
                              where: .compare(id, .eq, .text(Self.museum)))
            return try await tx.delete(from: Self.notes, where: .compare(id, .eq, .text(Self.cafe)))
        }
        #expect(try await ids(store, .fullText(.allTokens(of: "national"), boost: nil)) == [])
        #expect(try await ids(store, .fullText(.allTokens(of: "tower"), boost: nil)) == [Self.museum])
        #expect(try await ids(store, .fullText(.allTokens(of: "museum"), boost: nil)) == [Self.museum])  // its tags stayed
        #expect(try await ids(store, .fullText(.allTokens(of: "roasters"), boost: nil)) == [])
        #expect(try await ids(store, .distance(latitude: 24.7136, longitude: 46.6753, radiusMeters: 2_000)) == [Self.museum])
    }
}

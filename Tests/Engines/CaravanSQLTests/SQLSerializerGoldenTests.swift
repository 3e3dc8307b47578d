import CaravanCore
import CaravanPostgres
import CaravanSQL
import CaravanSQLite
import Testing

/// The one SQL serializer (`CaravanSQL`) renders the same plans for both dialects: the exact SQL text and bound
/// values of each, side by side. A change here changes every statement Caravan sends, so it must be deliberate.
/// (The behaviour of these statements is tested on real databases by the engine tests.)
@Suite struct SQLSerializerGoldenTests {
    typealias SQLite = SQLBuilder<SQLiteSyntax>
    typealias Postgres = SQLBuilder<PostgresSyntax>

    static let notes = TableSchema(
        "notes",
        columns: [
            Column("id", .uuid, nullable: false),
            Column("owner", .uuid, nullable: false),
            Column("title", .text, nullable: false),
            Column("pinned", .boolean, nullable: false, default: .value(.bool(false))),
            Column("rating", .double),
            Column("tags", .textArray),
            Column("created_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["owner"], references: "users", ["id"], onDelete: .cascade)],
        checks: [CheckConstraint("rating_range", .between("rating", "0", "5"))],
        indexes: [
            Index("idx_notes_owner_created", [IndexKey("owner"), IndexKey("created_at", descending: true)], where: .isTrue("pinned")),
            Index("idx_notes_tags", [IndexKey("tags")], kind: .arrayMembership),
        ]
    )

    static func plan() throws -> ReadPlan {
        let query = Query(
            select: [.column(name: "title", alias: nil, cast: nil), .column(name: "created_at", alias: nil, cast: nil)],
            filters: [.column("pinned", .eq, "true"), .oneOf("title", ["a", "b"]), .column("rating", .gt, "2.5")],
            order: [OrderTerm(column: "rating", direction: .descending, nulls: .last)],
            limit: 20, offset: 40)
        return try ReadPlan(table: notes, query: query, access: .constant(true), maxRows: nil, includeCount: true)
    }

    @Test func aReadPlan() throws {
        let plan = try Self.plan()
        let sqlite = SQLite.select(plan)
        #expect(sqlite.text == #"SELECT "title", "created_at" FROM "notes" WHERE ("pinned" = 1 AND "title" IN (?, ?) AND "rating" > ?) ORDER BY "rating" DESC NULLS LAST LIMIT ? OFFSET ?"#)
        #expect(sqlite.bindings == [.text("a"), .text("b"), .double(2.5), .integer(20), .integer(40)])
        let postgres = Postgres.select(plan)
        #expect(postgres.text == #"SELECT "title", "created_at" FROM "notes" WHERE ("pinned" = TRUE AND "title" IN ($1::text, $2::text) AND "rating" > $3::float8) ORDER BY "rating" DESC NULLS LAST LIMIT $4::int8 OFFSET $5::int8"#)
        #expect(postgres.bindings == sqlite.bindings)

        #expect(SQLite.count(plan).text == #"SELECT count(*) FROM "notes" WHERE ("pinned" = 1 AND "title" IN (?, ?) AND "rating" > ?)"#)
        #expect(Postgres.count(plan).text == #"SELECT count(*) FROM "notes" WHERE ("pinned" = TRUE AND "title" IN ($1::text, $2::text) AND "rating" > $3::float8)"#)
    }

    @Test func anUnlimitedReadAndALockingOne() throws {
        let query = Query(filters: [.isNull("rating")])
        let plan = try ReadPlan(table: Self.notes, query: query, access: .constant(true), maxRows: nil, includeCount: false)
        #expect(SQLite.select(plan).bindings == [.integer(-1), .integer(0)], "SQLite's LIMIT -1 is no limit")
        #expect(Postgres.select(plan).text.hasSuffix(#"WHERE "rating" IS NULL ORDER BY "id" ASC NULLS LAST LIMIT NULL::int8 OFFSET $1::int8"#))

        let mine = BoundPredicate.compare(Column("owner", .uuid), .eq, .text("u1"))
        #expect(SQLite.selectRows(Self.notes, where: mine, locking: true).text
            == #"SELECT "id", "owner", "title", "pinned", "rating", "tags", "created_at" FROM "notes" WHERE "owner" = ? ORDER BY "id""#)
        #expect(Postgres.selectRows(Self.notes, where: mine, locking: true).text
            == #"SELECT "id", "owner", "title", "pinned", "rating", "tags", "created_at" FROM "notes" WHERE "owner" = $1::uuid ORDER BY "id" FOR NO KEY UPDATE OF "notes""#)
    }

    @Test func writes() throws {
        let row = RowValues(["id": .text("n1"), "title": .text("x"), "pinned": .bool(true), "tags": .json(#"["a"]"#), "rating": .null])
        let sqliteInsert = try SQLite.insert(row, into: Self.notes)
        #expect(sqliteInsert.text == #"INSERT INTO "notes" ("id", "title", "pinned", "tags", "rating") VALUES (?, ?, ?, ?, ?) RETURNING "id", "owner", "title", "pinned", "rating", "tags", "created_at""#)
        #expect(sqliteInsert.bindings == [.text("n1"), .text("x"), .bool(true), .json(#"["a"]"#), .null])
        let postgresInsert = try Postgres.insert(row, into: Self.notes)
        #expect(postgresInsert.text == #"INSERT INTO "notes" ("id", "title", "pinned", "tags", "rating") VALUES ($1::uuid, $2::text, TRUE, ARRAY(SELECT jsonb_array_elements_text($3::jsonb)), NULL::float8) RETURNING "id", "owner", "title", "pinned", "rating", "tags", "created_at""#)
        #expect(postgresInsert.bindings == [.text("n1"), .text("x"), .json(#"["a"]"#)])
        #expect(try SQLite.insert(RowValues(columns: [], values: []), into: Self.notes).text == #"INSERT INTO "notes" DEFAULT VALUES RETURNING "id", "owner", "title", "pinned", "rating", "tags", "created_at""#)
        // A conflict target skips a taken key instead of failing (the pipeline then merges or ignores).
        #expect(try SQLite.insert(row, into: Self.notes, skippingConflictOn: ["id"]).text
            == #"INSERT INTO "notes" ("id", "title", "pinned", "tags", "rating") VALUES (?, ?, ?, ?, ?) ON CONFLICT ("id") DO NOTHING RETURNING "id", "owner", "title", "pinned", "rating", "tags", "created_at""#)

        let key = BoundPredicate.compare(Column("id", .uuid), .eq, .text("n1"))
        #expect(try SQLite.update(Self.notes, set: RowValues(["title": .text("y")]), where: key).text == #"UPDATE "notes" SET "title" = ? WHERE "id" = ?"#)
        #expect(try Postgres.update(Self.notes, set: RowValues(["title": .text("y")]), where: key).text == #"UPDATE "notes" SET "title" = $1::text WHERE "id" = $2::uuid"#)
        #expect(SQLite.delete(from: Self.notes, where: key).text == #"DELETE FROM "notes" WHERE "id" = ?"#)
        #expect(Postgres.delete(from: Self.notes, where: key).text == #"DELETE FROM "notes" WHERE "id" = $1::uuid"#)
    }

    @Test func aPolicyCheckCountsFailingRowsWithNullAsFailing() throws {
        let rule = BoundPredicate.isBool(Column("pinned", .boolean), true)
        let rows = BoundPredicate.inList(Column("id", .uuid), [.text("n1"), .text("n2")])
        #expect(SQLite.countFailing(rule, in: Self.notes, rows: rows).text == #"SELECT count(*) FROM "notes" WHERE "id" IN (?, ?) AND NOT COALESCE(("pinned" IS 1), 0)"#)
        #expect(Postgres.countFailing(rule, in: Self.notes, rows: rows).text == #"SELECT count(*) FROM "notes" WHERE "id" IN ($1::uuid, $2::uuid) AND NOT COALESCE(("pinned" IS TRUE), FALSE)"#)
    }

    /// An outer row's column inside EXISTS is qualified on both engines (SQLite used to compare bare names there,
    /// which resolve to the subquery's own table).
    @Test func anOuterColumnInsideASubqueryIsQualifiedOnBothEngines() throws {
        let members = TableSchema("members", columns: [Column("note_id", .uuid, nullable: false), Column("user_id", .uuid, nullable: false)],
                                  primaryKey: ["note_id", "user_id"])
        let predicate = BoundPredicate.exists(members, .and([
            .compareColumns(Column("note_id", .uuid), .eq, Column("id", .uuid, qualifier: "notes")),
            .compare(Column("owner", .uuid, qualifier: "notes"), .isDistinct, .text("u1")),
        ]))
        #expect(SQLite.inlined(predicate) == #"EXISTS (SELECT 1 FROM "members" AS "caravan_subquery" WHERE ("note_id" = "notes"."id" AND "notes"."owner" IS NOT 'u1'))"#)
        #expect(Postgres.inlined(predicate) == #"EXISTS (SELECT 1 FROM "members" AS "caravan_subquery" WHERE ("note_id" = "notes"."id" AND "notes"."owner" IS DISTINCT FROM 'u1'::uuid))"#)
    }

    /// An IN subquery the engine can drive from an index on the other table (a token table's prefix range).
    @Test func anInSubqueryIsRenderedOnceForBothEngines() throws {
        let tokens = TableSchema("note_tokens", columns: [Column("token", .text, nullable: false), Column("note_id", .uuid, nullable: false)],
                                 primaryKey: ["token", "note_id"])
        let predicate = BoundPredicate.inSubquery(Column("id", .uuid), tokens, selecting: Column("note_id", .uuid),
                                                  where: .like(Column("token", .text), pattern: "ri%", caseInsensitive: false))
        #expect(SQLite.inlined(predicate) == #""id" IN (SELECT "note_id" FROM "note_tokens" AS "caravan_subquery" WHERE "token" GLOB 'ri*')"#)
        #expect(Postgres.inlined(predicate) == #""id" IN (SELECT "note_id" FROM "note_tokens" AS "caravan_subquery" WHERE "token" LIKE 'ri%')"#)
        // In memory it is the subquery's answer for the row's value (and unknown for NULL).
        let answered = predicate.evaluate({ $0 == "id" ? .text("n1") : .null }) { _, inner in inner.evaluate { $0 == "note_id" ? .text("n1") : .text("rice") } }
        #expect(answered == true)
        #expect(predicate.evaluate({ _ in .null }) { _, _ in true } == nil)
    }

    @Test func patternsAndArraysAreSpelledPerEngine() throws {
        let title = Column("title", .text)
        var sqlite = SQLite()
        sqlite.predicate(.or([.like(title, pattern: "a%_\\%", caseInsensitive: false), .like(title, pattern: "A%", caseInsensitive: true)]))
        #expect(sqlite.text == #"("title" GLOB ? OR caravan_casefold("title") LIKE ? ESCAPE '\')"#)
        #expect(sqlite.bindings == [.text("a*?%"), .text("a%")])
        var postgres = Postgres()
        postgres.predicate(.or([.like(title, pattern: "a%_\\%", caseInsensitive: false), .like(title, pattern: "A%", caseInsensitive: true)]))
        #expect(postgres.text == #"("title" LIKE $1::text OR "title" ILIKE $2::text)"#)

        let tags = Column("tags", .textArray)
        var sqliteArray = SQLite()
        sqliteArray.predicate(.array(tags, .overlaps, [.text("x")]))
        #expect(sqliteArray.text == #"(CASE WHEN "tags" IS NULL THEN NULL ELSE EXISTS (SELECT 1 FROM json_each("tags") AS stored WHERE stored.value IN (SELECT value FROM json_each(?))) END)"#)
        var postgresArray = Postgres()
        postgresArray.predicate(.array(tags, .overlaps, [.text("x")]))
        #expect(postgresArray.text == #""tags" && ARRAY(SELECT jsonb_array_elements_text($1::jsonb))"#)
        #expect(postgresArray.bindings == [.json(#"["x"]"#)])
    }

    @Test func aLongListIsOneJSONParameterOnPostgres() throws {
        let ids = (0..<101).map { Value.integer(Int64($0)) }
        var postgres = Postgres()
        postgres.predicate(.inList(Column("n", .integer), ids))
        #expect(postgres.text == #""n" IN (SELECT (element)::int8 FROM jsonb_array_elements_text($1::jsonb) AS element)"#)
        var sqlite = SQLite()
        sqlite.predicate(.inList(Column("n", .integer), ids))
        #expect(sqlite.bindings.count == 101)
    }

    @Test func aTableWithItsKeysChecksAndIndexes() throws {
        #expect(try SQLSchema<SQLiteSyntax>.createTable(Self.notes) == [
            """
            CREATE TABLE "notes" (
              "id" TEXT NOT NULL CHECK (length("id") = 36),
              "owner" TEXT NOT NULL CHECK (length("owner") = 36),
              "title" TEXT NOT NULL,
              "pinned" INTEGER NOT NULL DEFAULT 0 CHECK ("pinned" IN (0, 1)),
              "rating" REAL,
              "tags" TEXT CHECK ("tags" IS NULL OR (json_valid("tags") AND json_type("tags") = 'array')),
              "created_at" TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
              PRIMARY KEY ("id"),
              FOREIGN KEY ("owner") REFERENCES "users" ("id") ON DELETE CASCADE,
              CONSTRAINT "rating_range" CHECK (("rating" >= 0.0 AND "rating" <= 5.0))
            )
            """,
            #"CREATE INDEX "idx_notes_owner_created" ON "notes" ("owner", "created_at" DESC) WHERE "pinned" IS 1"#,
        ], "the GIN index has no SQLite equivalent and is skipped")
        #expect(try SQLSchema<PostgresSyntax>.createTable(Self.notes) == [
            """
            CREATE TABLE "notes" (
              "id" uuid NOT NULL,
              "owner" uuid NOT NULL,
              "title" text NOT NULL,
              "pinned" boolean NOT NULL DEFAULT false,
              "rating" float8,
              "tags" text[],
              "created_at" timestamptz NOT NULL DEFAULT now(),
              PRIMARY KEY ("id"),
              FOREIGN KEY ("owner") REFERENCES "users" ("id") ON DELETE CASCADE,
              CONSTRAINT "rating_range" CHECK (("rating" >= 0.0 AND "rating" <= 5.0))
            )
            """,
            #"CREATE INDEX "idx_notes_owner_created" ON "notes" ("owner", "created_at" DESC) WHERE "pinned" IS TRUE"#,
            #"CREATE INDEX "idx_notes_tags" ON "notes" USING gin ("tags")"#,
        ])
    }

    @Test func laterChangesToATable() throws {
        let color = Column("color", .text, nullable: false, default: .value(.text("it's blue")))
        let index = Index("idx_notes_title", [IndexKey("title")], unique: true)
        let changes: [SchemaChange] = [.addColumn(color, to: Self.notes), .createIndex(index, on: Self.notes)]
        #expect(try SQLSchema<SQLiteSyntax>.render(changes) == """
            ALTER TABLE "notes" ADD COLUMN "color" TEXT NOT NULL DEFAULT 'it''s blue';
            CREATE UNIQUE INDEX "idx_notes_title" ON "notes" ("title");

            """)
        #expect(try SQLSchema<PostgresSyntax>.render(changes) == """
            ALTER TABLE "notes" ADD COLUMN "color" text NOT NULL DEFAULT 'it''s blue';
            CREATE UNIQUE INDEX "idx_notes_title" ON "notes" ("title");

            """)
        let error = #expect(throws: CaravanError.self) {
            try SQLSchema<SQLiteSyntax>.render([.addColumn(Column("size", .integer, nullable: false), to: Self.notes)])
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("notes.size") == true)
    }

    /// A `.textPrefix` index compares bytes whatever the collation: `text_pattern_ops` on PostgreSQL (so
    /// `LIKE 'abc%'` can use it), an ordinary index under SQLite's BINARY collation.
    @Test func aTextPrefixIndex() throws {
        let index = Index("idx_notes_title_prefix", [IndexKey("title", descending: true)], kind: .textPrefix)
        #expect(try SQLSchema<SQLiteSyntax>.render([.createIndex(index, on: Self.notes)]) == """
            CREATE INDEX "idx_notes_title_prefix" ON "notes" ("title" DESC);

            """)
        #expect(try SQLSchema<PostgresSyntax>.render([.createIndex(index, on: Self.notes)]) == """
            CREATE INDEX "idx_notes_title_prefix" ON "notes" ("title" text_pattern_ops DESC);

            """)
    }

    /// A renamed table: the same statement on both engines (each carries the rows, indexes and the foreign keys that
    /// point at it along).
    @Test func aRenamedTable() throws {
        for rendered in [try SQLSchema<SQLiteSyntax>.render([.renameTable("notes", to: "jottings")]),
                         try SQLSchema<PostgresSyntax>.render([.renameTable("notes", to: "jottings")])] {
            #expect(rendered == "ALTER TABLE \"notes\" RENAME TO \"jottings\";\n")
        }
    }

    /// An embedded resource is a correlated subquery inside the read's one statement: the JSON of each related row
    /// built by the engine, keys bound as parameters, the embedded table's policy and filters inside, its order and
    /// page applied before the rows are aggregated. The parent's page is taken first, so embeds run for its rows only.
    @Test func aReadWithAnEmbeddedResource() throws {
        let users = TableSchema("users", columns: [Column("id", .uuid, nullable: false), Column("name", .text)], primaryKey: ["id"])
        let tables = [users, Self.notes]
        let embedding = EmbeddingContext(table: { name in tables.first { $0.name == name } }, tables: tables, readRule: { table in
            table.name == "notes" ? .isBool(Column("pinned", .boolean), true) : .constant(true)
        })
        var query = Query(select: [.column(name: "name", alias: nil, cast: nil),
                                   .embed(EmbedRequest(table: "notes", select: [.column(name: "title", alias: nil, cast: nil),
                                                                                  .column(name: "pinned", alias: nil, cast: nil),
                                                                                  .column(name: "tags", alias: nil, cast: nil)]))])
        query.embedded["notes"] = Query(filters: [.column("rating", .gt, "2")], order: [OrderTerm(column: "rating", direction: .descending, nulls: .last)], limit: 3)
        let plan = try ReadPlan(table: users, query: query, access: .constant(true), maxRows: nil, includeCount: false, embedding: embedding)
        let sqlite = SQLite.select(plan)
        #expect(sqlite.text == #"SELECT "name", (SELECT json_group_array(json("caravan_embed")) FROM (SELECT json_object(?, "title", ?, CASE WHEN "pinned" IS NULL THEN NULL WHEN "pinned" THEN json('true') ELSE json('false') END, ?, json("tags")) AS "caravan_embed" FROM "notes" WHERE ("owner" = "users"."id" AND "rating" > ? AND "pinned" IS 1) ORDER BY "rating" DESC NULLS LAST LIMIT ? OFFSET ?) AS "caravan_embed_rows") FROM (SELECT * FROM "users" WHERE 1 ORDER BY "id" ASC NULLS LAST LIMIT ? OFFSET ?) AS "users" ORDER BY "id" ASC NULLS LAST"#)
        #expect(sqlite.bindings == [.text("title"), .text("pinned"), .text("tags"), .double(2), .integer(3), .integer(0), .integer(-1), .integer(0)])
        let postgres = Postgres.select(plan)
        #expect(postgres.text == #"SELECT "name", ((SELECT COALESCE(json_agg("caravan_embed"), '[]'::json) FROM (SELECT json_build_object($1::text, "title", $2::text, "pinned", $3::text, to_jsonb("tags")) AS "caravan_embed" FROM "notes" WHERE ("owner" = "users"."id" AND "rating" > $4::float8 AND "pinned" IS TRUE) ORDER BY "rating" DESC NULLS LAST LIMIT $5::int8 OFFSET $6::int8) AS "caravan_embed_rows"))::text FROM (SELECT * FROM "users" WHERE TRUE ORDER BY "id" ASC NULLS LAST LIMIT NULL::int8 OFFSET $7::int8) AS "users" ORDER BY "id" ASC NULLS LAST"#)
        #expect(!sqlite.text.contains(";") && !postgres.text.contains(";"), "one statement")
    }

    /// Aggregates (PostgREST 12): one statement grouped by every selected column that is not aggregated, over the
    /// rows the filter and policy let through; the input cast before the function, sums of integers as integers and
    /// averages as doubles on both engines. The count of a grouped read counts its groups.
    @Test func aGroupedReadWithAggregates() throws {
        let query = try QueryParser.parseRead(QueryString("select=pinned,n:count(),rating.avg(),rating::int.sum(),created_at.max()&rating=gt.1&order=pinned.desc&limit=5"))
        let plan = try ReadPlan(table: Self.notes, query: query, access: .compare(Column("owner", .uuid), .eq, .text("u")), maxRows: nil,
                                includeCount: true, aggregates: true)
        let sqlite = SQLite.select(plan)
        #expect(sqlite.text == #"SELECT "pinned", count(*), avg("rating"), sum(CAST(round("rating") AS INTEGER)), max("created_at") FROM "notes" WHERE ("rating" > ? AND "owner" = ?) GROUP BY "pinned" ORDER BY "pinned" DESC NULLS FIRST LIMIT ? OFFSET ?"#)
        #expect(sqlite.bindings == [.double(1), .text("u"), .integer(5), .integer(0)])
        let postgres = Postgres.select(plan)
        #expect(postgres.text == #"SELECT "pinned", count(*), avg("rating")::float8, sum(("rating")::int4)::int8, to_char(max("created_at") AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') FROM "notes" WHERE ("rating" > $1::float8 AND "owner" = $2::uuid) GROUP BY "pinned" ORDER BY "pinned" DESC NULLS FIRST LIMIT $3::int8 OFFSET $4::int8"#)
        #expect(SQLite.count(plan).text == #"SELECT count(*) FROM (SELECT count(*) FROM "notes" WHERE ("rating" > ? AND "owner" = ?) GROUP BY "pinned") AS "caravan_groups""#)
        #expect(Postgres.count(plan).text == #"SELECT count(*) FROM (SELECT count(*) FROM "notes" WHERE ("rating" > $1::float8 AND "owner" = $2::uuid) GROUP BY "pinned") AS "caravan_groups""#)
        #expect(!sqlite.text.contains(";") && !postgres.text.contains(";"), "one statement")
    }

    /// Aggregates inside an embedded resource are grouped per parent row, inside the embed's correlated subquery.
    @Test func anEmbeddedResourceWithAggregates() throws {
        let users = TableSchema("users", columns: [Column("id", .uuid, nullable: false), Column("name", .text)], primaryKey: ["id"])
        let tables = [users, Self.notes]
        let embedding = EmbeddingContext(table: { name in tables.first { $0.name == name } }, tables: tables, readRule: { _ in .constant(true) })
        let query = try QueryParser.parseRead(QueryString("select=name,notes(pinned,rating.sum())"))
        let plan = try ReadPlan(table: users, query: query, access: .constant(true), maxRows: nil, includeCount: false, embedding: embedding, aggregates: true)
        let sqlite = SQLite.select(plan)
        #expect(sqlite.text == #"SELECT "name", (SELECT json_group_array(json("caravan_embed")) FROM (SELECT json_object(?, CASE WHEN "pinned" IS NULL THEN NULL WHEN "pinned" THEN json('true') ELSE json('false') END, ?, sum("rating")) AS "caravan_embed" FROM "notes" WHERE ("owner" = "users"."id" AND 1 AND 1) GROUP BY "pinned" ORDER BY "pinned" ASC NULLS LAST LIMIT ? OFFSET ?) AS "caravan_embed_rows") FROM (SELECT * FROM "users" WHERE 1 ORDER BY "id" ASC NULLS LAST LIMIT ? OFFSET ?) AS "users" ORDER BY "id" ASC NULLS LAST"#)
        let postgres = Postgres.select(plan)
        #expect(postgres.text == #"SELECT "name", ((SELECT COALESCE(json_agg("caravan_embed"), '[]'::json) FROM (SELECT json_build_object($1::text, "pinned", $2::text, sum("rating")::float8) AS "caravan_embed" FROM "notes" WHERE ("owner" = "users"."id" AND TRUE AND TRUE) GROUP BY "pinned" ORDER BY "pinned" ASC NULLS LAST LIMIT NULL::int8 OFFSET $3::int8) AS "caravan_embed_rows"))::text FROM (SELECT * FROM "users" WHERE TRUE ORDER BY "id" ASC NULLS LAST LIMIT NULL::int8 OFFSET $4::int8) AS "users" ORDER BY "id" ASC NULLS LAST"#)
    }
}

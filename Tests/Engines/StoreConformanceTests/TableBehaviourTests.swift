import CaravanCore
import CaravanTesting
import Foundation
import Testing

/// Derived columns, `updated_at` maintenance and write hooks: declared by an app, run by the pipeline on both
/// engines, in the write's transaction.
private func makeRow(_ pairs: [(String, Value)]) -> RowValues {
    RowValues(columns: pairs.map(\.0), values: pairs.map(\.1))
}

@Suite struct TableBehaviourTests {
    static let threads = TableSchema(
        "threads",
        columns: [
            Column("id", .text, nullable: false),
            Column("title", .text, nullable: false),
            Column("title_length", .integer),
            Column("post_count", .integer, nullable: false, default: .value(.integer(0))),
            Column("last_post", .text),
            Column("updated_at", .timestamp, default: .now),
        ],
        primaryKey: ["id"]
    )
    static let posts = TableSchema(
        "posts",
        columns: [
            Column("id", .text, nullable: false),
            Column("thread_id", .text, nullable: false),
            Column("author", .uuid, nullable: false),
            Column("body", .text, nullable: false),
        ],
        primaryKey: ["id"],
        foreignKeys: [ForeignKey(["thread_id"], references: "threads", ["id"], onDelete: .cascade)]
    )

    /// Keeps `threads.post_count` and `last_post` in step with `posts` (the shape of LangMatcher's `on_new_message`).
    static func countPosts(_ write: RowWrite, _ transaction: any StoreTransaction) async throws {
        guard let thread = (write.new ?? write.old)?.text("thread_id") else { return }
        let threadColumn = try threads.requireColumn("id")
        let current = try await transaction.fetch(try ReadPlan(table: threads, query: Query(), access: .compare(threadColumn, .eq, .text(thread)),
                                                         maxRows: nil, includeCount: false))
        guard let row = current.rows.first, case .integer(let count) = row[threads.position(of: "post_count")!] else { return }
        var values = makeRow([("post_count", .integer(count + (write.operation == .delete ? -1 : write.operation == .insert ? 1 : 0)))])
        if let body = write.new?.text("body") { values.set("last_post", .text(body)) }
        _ = try await transaction.update(threads, set: values, where: .compare(threadColumn, .eq, .text(thread)))
    }

    static let module = AppModule(
        name: "forum",
        tables: [threads, posts],
        migrations: [Migration(id: "forum-0001", changes: [.createTable(threads), .createTable(posts)])],
        policies: [
            // Threads have no policy: only the service role (and so the hook) writes them.
            "posts": [TablePolicy("posts_own", for: TablePolicy.allCommands, to: [.authenticated], using: .ownedBy("author"))],
        ],
        behaviours: [
            TableBehaviour("threads", derived: [DerivedColumn("title_length") { row in
                row.text("title").map { .integer(Int64($0.unicodeScalars.count)) } ?? .null
            }], touches: "updated_at"),
            TableBehaviour("posts", afterWrite: countPosts),
        ]
    )

    static let user = "6f1c1a55-8a38-4a43-9a34-2f2a4f4d0d11"

    func thread(_ store: any Store, _ catalog: Catalog) async throws -> [String: Value] {
        let result = try await store.fetch(try ReadPlan(table: Self.threads, query: Query(), access: .constant(true), maxRows: nil, includeCount: false))
        let row = try #require(result.rows.first)
        return Dictionary(uniqueKeysWithValues: zip(result.outputs.map(\.name), row))
    }

    @Test(arguments: Engine.allCases)
    func derivedColumnsTouchedTimestampsAndHooksRunInTheWrite(engine: Engine) async throws {
        let store = try await engine.makeStore(migrations: Self.module.migrations)
        let catalog = Catalog(modules: [SystemModule.module, Self.module])
        let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
        // A client-sent derived value is replaced by the computed one.
        _ = try await pipeline.run(catalog.access(for: .serviceRole)) { tx in
            try await tx.insert([makeRow([("id", .text("t1")), ("title", .text("مرحبا")), ("title_length", .integer(99)),
                                      ("updated_at", .text("2000-01-01T00:00:00.000000Z"))])], into: Self.threads, conflict: nil)
        }
        var row = try await thread(store, catalog)
        #expect(row["title_length"] == .integer(5))
        #expect(row["updated_at"] == .text("2000-01-01T00:00:00.000000Z"))

        // An update recomputes the derived column and touches updated_at.
        _ = try await pipeline.run(catalog.access(for: .serviceRole)) { tx in
            try await tx.update(Self.threads, set: makeRow([("title", .text("hello world"))]), where: .constant(true))
        }
        row = try await thread(store, catalog)
        #expect(row["title_length"] == .integer(11))
        guard case .text(let touched)? = row["updated_at"] else { Issue.record("updated_at is not text"); return }
        #expect(touched > "2020-01-01")

        // A user may write posts but not threads; the hook keeps the thread's counters as the service role.
        let member = catalog.access(for: Identity(role: .authenticated, userID: Self.user))
        for (id, body) in [("p1", "first"), ("p2", "second"), ("p3", "third")] {
            _ = try await pipeline.run(member) { tx in
                try await tx.insert([makeRow([("id", .text(id)), ("thread_id", .text("t1")), ("author", .text(Self.user)), ("body", .text(body))])],
                              into: Self.posts, conflict: nil)
            }
        }
        // Threads are invisible to the user: an update reaches no row (PostgREST semantics), the counters stay.
        let reached = try await pipeline.run(member) { tx in
            try await tx.update(Self.threads, set: makeRow([("post_count", .integer(0))]), where: .constant(true)).updated
        }
        #expect(reached == 0)
        let idColumn = try Self.posts.requireColumn("id")
        _ = try await pipeline.run(member) { tx in try await tx.delete(from: Self.posts, where: .compare(idColumn, .eq, .text("p2"))) }
        row = try await thread(store, catalog)
        #expect(row["post_count"] == .integer(2))
        #expect(row["last_post"] == .text("third"))

        // A failing hook rolls the whole write back.
        let failing = AppModule(name: "forum", tables: Self.module.tables, migrations: [], policies: Self.module.policies,
                                behaviours: [TableBehaviour("posts") { _, _ in throw CaravanError(.checkViolation, "refused by the hook") }])
        let strict = Catalog(modules: [SystemModule.module, failing])
        await #expect(throws: CaravanError.self) {
            try await WritePipeline(store: store, publisher: ChangePublisher()).run(strict.access(for: .serviceRole)) { tx in
                try await tx.insert([makeRow([("id", .text("p9")), ("thread_id", .text("t1")), ("author", .text(Self.user)), ("body", .text("x"))])],
                              into: Self.posts, conflict: nil)
            }
        }
        let count = try await store.fetch(try ReadPlan(table: Self.posts, query: Query(), access: .constant(true), maxRows: nil, includeCount: true))
        #expect(count.totalCount == 2)
    }

    /// What a statement hook was called with, call by call.
    actor StatementCalls {
        var calls: [[ChangeOperation]] = []
        func record(_ writes: [RowWrite]) { calls.append(writes.map(\.operation)) }
    }

    @Test("a statement hook runs once per statement with every row it wrote; the answer is the rows as stored after it", arguments: Engine.allCases)
    func statementHooksRunOncePerStatement(engine: Engine) async throws {
        let store = try await engine.makeStore(migrations: Self.module.migrations)
        let calls = StatementCalls()
        let threadColumn = try Self.threads.requireColumn("id")
        let postThread = try Self.posts.requireColumn("thread_id")
        // Counts the thread's posts once per statement, and marks the bodies of the posts it inserted.
        let module = AppModule(name: "forum", tables: Self.module.tables, migrations: [], policies: Self.module.policies, behaviours: [
            TableBehaviour("posts", afterStatement: { writes, tx in
                await calls.record(writes)
                let count = try await tx.count(Self.posts, where: .compare(postThread, .eq, .text("t1")))
                _ = try await tx.update(Self.threads, set: makeRow([("post_count", .integer(Int64(count)))]), where: .compare(threadColumn, .eq, .text("t1")))
                let ids = writes.filter { $0.operation == .insert }.compactMap { $0.new?["id"] }
                guard !ids.isEmpty else { return }
                _ = try await tx.update(Self.posts, set: makeRow([("body", .text("seen"))]), where: .inList(try Self.posts.requireColumn("id"), ids))
            }),
        ])
        let catalog = Catalog(modules: [SystemModule.module, module])
        let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
        let service = catalog.access(for: .serviceRole)
        _ = try await pipeline.run(service) { tx in
            try await tx.insert([makeRow([("id", .text("t1")), ("title", .text("one"))])], into: Self.threads, conflict: nil)
        }
        // 450 rows: one call, and every answered row (re-read past one slice) is as the hook left it.
        let posts = (0..<450).map { i in
            makeRow([("id", .text("p\(i)")), ("thread_id", .text("t1")), ("author", .text(Self.user)), ("body", .text("b\(i)"))])
        }
        let inserted = try await pipeline.run(service) { tx in try await tx.insert(posts, into: Self.posts, conflict: nil) }
        #expect(inserted.rows.count == 450)
        #expect(inserted.rows.allSatisfy { $0[Self.posts.position(of: "body")!] == .text("seen") })
        #expect(inserted.rows.map { $0[0] } == posts.map { $0["id"]! })
        var recorded = await calls.calls
        // The hook's own update of the posts is a statement too: it runs the hook once more, with 450 updates.
        #expect(recorded.count == 2)
        #expect(recorded.first == Array(repeating: .insert, count: 450))
        #expect(recorded.last == Array(repeating: .update, count: 450))
        #expect(try await thread(store, catalog)["post_count"] == .integer(450))

        let idColumn = try Self.posts.requireColumn("id")
        _ = try await pipeline.run(service) { tx in try await tx.delete(from: Self.posts, where: .inList(idColumn, [.text("p1"), .text("p2"), .text("p3")])) }
        recorded = await calls.calls
        #expect(recorded.count == 3)
        #expect(recorded.last == [.delete, .delete, .delete])
        #expect(try await thread(store, catalog)["post_count"] == .integer(447))

        // A statement that writes nothing calls nothing; a failing statement hook rolls the statement back.
        _ = try await pipeline.run(service) { tx in try await tx.delete(from: Self.posts, where: .compare(idColumn, .eq, .text("absent"))) }
        #expect(await calls.calls.count == 3)
        let failing = Catalog(modules: [SystemModule.module, AppModule(name: "forum", tables: Self.module.tables, migrations: [], policies: Self.module.policies,
            behaviours: [TableBehaviour("posts", afterStatement: { _, _ in throw CaravanError(.checkViolation, "refused by the hook") })])])
        await #expect(throws: CaravanError.self) {
            try await WritePipeline(store: store, publisher: ChangePublisher()).run(failing.access(for: .serviceRole)) { tx in
                try await tx.insert([makeRow([("id", .text("p900")), ("thread_id", .text("t1")), ("author", .text(Self.user)), ("body", .text("x"))])],
                                    into: Self.posts, conflict: nil)
            }
        }
        let count = try await store.fetch(try ReadPlan(table: Self.posts, query: Query(), access: .constant(true), maxRows: nil, includeCount: true))
        #expect(count.totalCount == 447)
    }

    @Test func appsDeclaringTheSameTableAreRefusedNamingBoth() throws {
        let other = AppModule(name: "board", tables: [Self.threads], migrations: [])
        #expect { try Catalog.validated(modules: [Self.module, other]) } throws: { error in
            let message = (error as? CaravanError)?.message ?? ""
            return message.contains("forum") && message.contains("board") && message.contains("threads")
        }
        let reserved = AppModule(name: "sneaky", tables: [TableSchema("caravan_changes", columns: [Column("seq", .integer)], primaryKey: ["seq"])], migrations: [])
        #expect(throws: CaravanError.self) { try Catalog.validated(modules: [reserved]) }
        _ = try Catalog.validated(modules: [SystemModule.module, Self.module])
    }
}

public import CaravanCore
import Foundation

/// A Caravan app module of your own: one table, one policy, one RPC function, one edge function, and no SQL. The table is declared
/// once; Caravan renders it for SQLite and PostgreSQL when the deployment migrates.
public enum NotesModule {
    /// `notes`: a user's private notes. `owner` is the auth user's id.
    public static let notes = TableSchema(
        "notes",
        columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID),
            Column("owner", .uuid, nullable: false),
            Column("title", .text, nullable: false),
            Column("body", .text),
            Column("pinned", .boolean, nullable: false, default: .value(.bool(false))),
            Column("created_at", .timestamp, nullable: false, default: .now),
        ],
        primaryKey: ["id"],
        checks: [CheckConstraint("notes_title_not_blank", .column("title", .neq, ""))],
        indexes: [Index("idx_notes_owner_created", [IndexKey("owner"), IndexKey("created_at", descending: true)])],
        synced: true,
        owner: "owner"
    )

    /// Each signed-in user reads and writes only their own notes; anonymous callers see none.
    public static let policies: [String: [TablePolicy]] = [
        "notes": [TablePolicy("notes_own", for: TablePolicy.allCommands, to: [.authenticated], using: .ownedBy("owner"))],
    ]

    /// `count_notes(only_pinned boolean default false) → bigint`: the caller's notes, counted under their policies.
    public static let countNotes = RPCFunction(
        "count_notes", parameters: [RPCParameter("only_pinned", .boolean, default: .bool(false))], readOnly: true
    ) { arguments, transaction in
        .scalar(.integer(try await count(onlyPinned: arguments["only_pinned"] == .bool(true), in: transaction)))
    }

    /// The caller's notes (or pinned notes) visible under their policies.
    static func count(onlyPinned: Bool, in transaction: any StoreTransaction) async throws -> Int64 {
        var query = Query(select: [.column(name: "id", alias: nil, cast: nil)], limit: 0)
        if onlyPinned { query.filters = [.isTrue("pinned")] }
        let plan = try ReadPlan(table: notes, query: query, access: try transaction.access.readRule(notes), maxRows: nil, includeCount: true)
        return Int64(try await transaction.fetch(plan).totalCount ?? 0)
    }

    /// `POST /functions/v1/notes-summary` (supabase-swift's `functions.invoke("notes-summary")`): the signed-in
    /// caller's note and pinned-note counts, read in one transaction as the caller, with a greeting in `{"name"}`
    /// of the body when there is one.
    public static let summary = EdgeFunction("notes-summary", requiresUser: true) { request, context in
        var greeting = "Hello"
        if !request.body.isEmpty, case .string(let name)? = try request.json()["name"] { greeting += " " + name }
        let (all, pinned) = try await context.transaction { transaction in
            (try await count(onlyPinned: false, in: transaction), try await count(onlyPinned: true, in: transaction))
        }
        return .json(.object([("greeting", .string(greeting)), ("notes", .integer(all)), ("pinned", .integer(pinned))]))
    }

    public static let module = AppModule(
        name: "notes",
        tables: [notes],
        // Declared, and frozen into Migrations/<dialect>/ by `caravan-notes migrations freeze --app notes --out
        // Sources/Notes/Migrations`; a later change is a new migration, never an edit of a shipped one.
        migrations: [MigrationFiles(embedded: EmbeddedFiles.contents).migration("notes-0001-create", changes: [.createTable(notes)])],
        policies: policies,
        functions: [countNotes],
        edgeFunctions: [summary]
    )
}

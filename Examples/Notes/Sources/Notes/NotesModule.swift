public import CaravanCore
import Foundation

/// A Caravan app module of your own: one table, one policy, one RPC function, and no SQL. The table is declared
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
        var query = Query(select: [.column(name: "id", alias: nil, cast: nil)], limit: 0)
        if arguments["only_pinned"] == .bool(true) { query.filters = [.isTrue("pinned")] }
        let plan = try ReadPlan(table: notes, query: query, access: try transaction.access.readRule(notes), maxRows: nil, includeCount: true)
        return await .scalar(.integer(Int64(try transaction.fetch(plan).totalCount ?? 0)))
    }

    public static let module = AppModule(
        name: "notes",
        tables: [notes],
        // Declared, and frozen into Migrations/<dialect>/ by `caravan-notes migrations freeze --app notes --out
        // Sources/Notes/Migrations`; a later change is a new migration, never an edit of a shipped one.
        migrations: [MigrationFiles(embedded: EmbeddedFiles.contents).migration("notes-0001-create", changes: [.createTable(notes)])],
        policies: policies,
        functions: [countNotes]
    )
}

// An app module: a table, its policy, an RPC function, a table behaviour and a migration, with no SQL.
// This file is compiled by `swift build` (a SwiftPM snippet), and the CaravanCore documentation shows it, so the
// article's code cannot drift from the API. README.md's app module example is a part of it.

import CaravanCore

// snippet.table
let notes = TableSchema("notes", columns: [
    Column("id", .uuid, nullable: false, default: .randomUUID),
    Column("owner", .uuid, nullable: false),
    Column("title", .text, nullable: false),
    Column("title_length", .integer),
    Column("pinned", .boolean, nullable: false, default: .value(.bool(false))),
    Column("created_at", .timestamp, nullable: false, default: .now),
], primaryKey: ["id"],
   checks: [CheckConstraint("notes_title_not_blank", .column("title", .neq, ""))],
   indexes: [Index("idx_notes_owner_created", [IndexKey("owner"), IndexKey("created_at", descending: true)])],
   synced: true, owner: "owner")

// snippet.policy
let notesPolicies: [String: [TablePolicy]] = [
    "notes": [TablePolicy("notes_own", for: TablePolicy.allCommands, to: [.authenticated], using: .ownedBy("owner"))],
]

// snippet.membership
// Another table decides: a member of a note's notebook reads the note (an `exists` subquery on `notebook_members`).
let notebookMembersRead = TablePolicy("notes_members_read", for: [.select], to: [.authenticated],
    using: .exists(table: "notebook_members", where: [.matchesOuter(inner: "notebook_id", outer: "notebook_id"),
                                                      .equals(inner: "user_id", .authUID)]))

// snippet.function
let countNotes = RPCFunction("count_notes", parameters: [RPCParameter("only_pinned", .boolean, default: .bool(false))],
                             readOnly: true) { arguments, transaction in
    var query = Query(select: [.column(name: "id", alias: nil, cast: nil)], limit: 0)
    if arguments["only_pinned"] == .bool(true) { query.filters = [.isTrue("pinned")] }
    let plan = try ReadPlan(table: notes, query: query, access: try transaction.access.readRule(notes), maxRows: nil,
                            includeCount: true)
    return await .scalar(.integer(Int64(try transaction.fetch(plan).totalCount ?? 0)))
}

// snippet.behaviour
let titleLength = TableBehaviour("notes", derived: [
    DerivedColumn("title_length") { row in row.text("title").map { .integer(Int64($0.count)) } ?? .null },
])

// snippet.module
let module = AppModule(
    name: "notes", tables: [notes],
    migrations: [Migration(id: "notes-0001-create", changes: [.createTable(notes)])],
    policies: notesPolicies, functions: [countNotes], behaviours: [titleLength])
// snippet.end
_ = (module, notebookMembersRead)

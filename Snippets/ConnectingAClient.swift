// The client SDK: a local store of the synced tables, a session, a sync engine and realtime.
// This file is compiled by `swift build` (a SwiftPM snippet), and the CaravanClient documentation shows it, so the
// article's code cannot drift from the API. README.md's client example is a part of it.

import CaravanClient
import CaravanCore
import Foundation
import Logging

// snippet.hide
let notes = TableSchema("notes", columns: [
    Column("id", .uuid, nullable: false, default: .randomUUID),
    Column("owner", .uuid, nullable: false),
    Column("title", .text, nullable: false),
], primaryKey: ["id"], synced: true, owner: "owner")
let anonKey = ProcessInfo.processInfo.environment["CARAVAN_ANON_KEY"] ?? ""
func connect() async throws {
// snippet.show
// snippet.connect
let api = CaravanAPI(baseURL: "http://127.0.0.1:8080", apiKey: anonKey, transport: AsyncHTTPClientTransport())
let store = try LocalStore(path: "notes.sqlite", tables: [notes])
let session = SessionManager(store: store, api: api, now: { Int64(Date().timeIntervalSince1970) })
let engine = SyncEngine(store: store, api: api, session: session, now: { Int64(Date().timeIntervalSince1970 * 1_000_000) })
_ = try await session.signUp(email: "ada@example.com", password: "correct horse battery")

// snippet.write
let owner = try store.session()!.userID
let now = Timestamp.format(microseconds: Int64(Date().timeIntervalSince1970 * 1_000_000))
try store.insert("notes", .object([("owner", .string(owner)), ("title", .string("buy dates"))]), now: now)
let report = try await engine.sync(tables: ["notes"])      // push the outbox, then pull until up to date

// snippet.observe
for try await rows in try store.observe("notes") {
    print(rows.count, "notes")                             // the local rows, again after every change
    break
}

// snippet.filter
_ = try await engine.sync(tables: ["notes"], filters: [try SyncFilter("notes.pinned=is.true")])

// snippet.realtime
let realtime = RealtimeClient(store: store, engine: engine, session: session, logger: Logger(label: "notes"))
try await realtime.run(tables: ["notes"]) { change in print(change.type, change.table, change.seq) }
// snippet.hide
_ = report
}

import ArgumentParser
import CaravanClient
import CaravanClientModels
import CaravanCore
import Foundation

struct SignUp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sign-up", abstract: "Create an account and keep its session in the store.")
    @OptionGroup var credentials: Credentials

    func run() async throws {
        try await credentials.start { session in try await session.signUp(email: credentials.email, password: credentials.password) }
    }
}

struct SignIn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sign-in", abstract: "Sign in and keep the session in the store.")
    @OptionGroup var credentials: Credentials

    func run() async throws {
        try await credentials.start { session in try await session.signIn(email: credentials.email, password: credentials.password) }
    }
}

/// The options of sign-up and sign-in, and what both do: get a session, keep it, print the user id.
struct Credentials: ParsableArguments {
    @OptionGroup var options: ClientOptions
    @Option var email: String
    @Option var password: String

    func start(_ body: (SessionManager) async throws -> ClientSession) async throws {
        let context = try options.context()
        let result: Result<ClientSession, any Error>
        do { result = .success(try await body(context.session)) } catch { result = .failure(error) }
        await context.close()
        printJSON(.object([("user_id", .string(try result.get().userID))]))
    }
}

struct SignOut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sign-out", abstract: "Forget the session (local rows and the outbox stay).")
    @OptionGroup var options: ClientOptions

    func run() async throws {
        let context = try options.context()
        try context.session.signOut()
        await context.close()
    }
}

struct Insert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Insert a row locally and queue it for the server (works offline).")
    @OptionGroup var write: LocalWriteOptions
    @Argument var table: String
    @Argument(help: "The row as a JSON object, or an array of rows (each its own local transaction).") var record: String
    @Flag(help: "Write through the typed API: each row decoded into the table's generated record (CaravanClientModels).")
    var typed = false

    func run() async throws {
        let (context, priority) = try await write.open()
        // An array inserts each row in its own transaction (its own outbox entry), in order.
        let parsed = try parseJSON(record, "the record")
        let records: [JSONValue] = if case .array(let items) = parsed { items } else { [parsed] }
        var rows: [JSONValue] = []
        for record in records {
            if typed {
                rows.append(try await Self.insertTyped(record, into: table, context.store, priority: priority))
            } else {
                rows.append(try context.store.insert(table, record, priority: priority, now: nowText(), beforeCommit: CrashPoint.hook(.beforeOutboxCommit)))
            }
            CrashPoint.hook(.afterOutboxCommit)?()
        }
        printJSON(parsed.isArray ? .array(rows) : rows[0])
    }

    /// The generated records of the synced apps, by table.
    static let recordTypes: [String: any TableRecord.Type] = Dictionary(
        (PlacesRecords.all + TravelLogRecords.all + GroupDecisionsRecords.all + LanguageExchangeRecords.all).map { ($0.table.name, $0) },
        uniquingKeysWith: { first, _ in first })

    static func insertTyped(_ row: JSONValue, into table: String, _ store: LocalStore, priority: MutationPriority) async throws -> JSONValue {
        guard let type = recordTypes[table] else { throw ValidationError("no generated record for table \(table)") }
        return try await insert(type, row, store, priority: priority)
    }

    static func insert<Record: TableRecord>(_ type: Record.Type, _ row: JSONValue, _ store: LocalStore, priority: MutationPriority) async throws -> JSONValue {
        let record = try RecordCoding.decode(Record.self, from: row)
        return try RecordCoding.json(try await store.insert(record, priority: priority, beforeCommit: CrashPoint.hook(.beforeOutboxCommit)))
    }
}

struct Update: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Update a local row by primary key and queue the update (works offline).")
    @OptionGroup var write: LocalWriteOptions
    @Argument var table: String
    @Argument(help: "The primary key as a JSON object.") var key: String
    @Argument(help: "The changed columns as a JSON object.") var changes: String

    func run() async throws {
        let (context, priority) = try await write.open()
        try context.store.update(table, key: try parseJSON(key, "the key"), try parseJSON(changes, "the changes"), priority: priority, now: nowText(),
                                 beforeCommit: CrashPoint.hook(.beforeOutboxCommit))
        CrashPoint.hook(.afterOutboxCommit)?()
    }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a local row by primary key and queue the delete (works offline).")
    @OptionGroup var write: LocalWriteOptions
    @Argument var table: String
    @Argument(help: "The primary key as a JSON object.") var key: String

    func run() async throws {
        let (context, priority) = try await write.open()
        try context.store.delete(table, key: try parseJSON(key, "the key"), priority: priority, now: nowText(),
                                 beforeCommit: CrashPoint.hook(.beforeOutboxCommit))
        CrashPoint.hook(.afterOutboxCommit)?()
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Send the queued attachment uploads, push the outbox, then pull until up to date.")
    @OptionGroup var options: ClientOptions
    @Option(help: "Tables to pull, comma-separated (default: the tables synced last time, else every synced table).") var tables: String?
    @Option(help: "A filter on a pulled table, in the REST grammar: places.area_id=eq.olaya (repeatable).") var filter: [String] = []
    @Option(help: "Changes per pulled page (at most 10,000).") var limit = 10_000
    @Option(help: "Tries per request on transient faults.") var attempts = 4
    @Flag(help: "Print {\"pushed\":N,\"rejected\":N,\"pulled\":N,\"has_more\":false,\"uploaded\":N,\"uploads_parked\":N} (and \"other_process_syncing\":true when another process was syncing the store).") var json = false

    func run() async throws {
        let context = try options.context()
        let scope = try tables.map { $0.split(separator: ",").map(String.init) } ?? context.store.syncedScopes().first ?? context.store.syncedTableNames
        let engine = SyncEngine(store: context.store, api: context.api, session: context.session, retry: RetryPolicy(attempts: attempts),
                                pullLimit: limit, now: nowMicroseconds,
                                faults: SyncFaults(afterPushReply: CrashPoint.hook(.duringPush), beforePullCommit: CrashPoint.hook(.duringPull),
                                                   afterUploadReply: CrashPoint.hook(.duringUpload)))
        let result: Result<SyncReport, any Error>
        let filters = try filter.map(SyncFilter.init)
        do { result = .success(try await engine.sync(tables: scope, filters: filters)) } catch { result = .failure(error) }
        await context.close()
        let report = try result.get()
        if json {
            printJSON(report.json)
        } else if report.otherProcessSyncing {
            FileHandle.standardOutput.write(Data("another process is syncing this store: nothing done\n".utf8))
        } else {
            FileHandle.standardOutput.write(Data("pushed \(report.pushed), rejected \(report.rejected), pulled \(report.pulled), uploaded \(report.uploaded)\n".utf8))
        }
    }
}

struct Rows: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print rows of a local table as a JSON array.")
    @OptionGroup var options: ClientOptions
    @Argument var table: String
    @Option(name: .customLong("where"), help: "column=value (repeatable; the value as JSON when it parses, else text).") var conditions: [String] = []

    func run() async throws {
        let context = try options.context()
        await context.close()
        var parsed: [(String, JSONValue)] = []
        for condition in conditions {
            guard let equals = condition.firstIndex(of: "=") else { throw ValidationError("--where takes column=value") }
            let value = String(condition[condition.index(after: equals)...])
            parsed.append((String(condition[..<equals]), (try? JSONParser.parse(value)) ?? .string(value)))
        }
        printJSON(.array(try context.store.rows(table, where: parsed)))
    }
}

struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "outbox", abstract: "Print the pending and parked mutations as JSON.")
    @OptionGroup var options: ClientOptions

    func run() async throws {
        let context = try options.context()
        await context.close()
        let entries = try context.store.outbox()
        printJSON(.object([
            ("pending", .array(entries.filter { $0.state != .parked }.map(\.json))),
            ("parked", .array(entries.filter { $0.state == .parked }.map(\.json))),
        ]))
    }
}

extension JSONValue {
    var isArray: Bool { if case .array = self { true } else { false } }
}

/// The options of the local writes (insert, update, delete): the store and the push priority.
struct LocalWriteOptions: ParsableArguments {
    @OptionGroup var options: ClientOptions
    @Option(help: "low, normal, high or immediate.") var priority = "normal"

    /// The store (no network: local writes work offline) and the parsed priority.
    func open() async throws -> (ClientContext, MutationPriority) {
        guard let parsed = MutationPriority(name: priority) else { throw ValidationError("--priority must be low, normal, high or immediate") }
        let context = try options.context()
        await context.close()
        return (context, parsed)
    }
}

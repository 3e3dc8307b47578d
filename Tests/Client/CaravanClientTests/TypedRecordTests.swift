@testable import CaravanClient
import CaravanClientModels
import CaravanCore
import Foundation
import GroupDecisions
import LanguageExchange
import Places
import Synchronization
import Testing
import TravelLog

/// The typed API on the local store: generated records in and out, filters in the REST grammar run as SQL.
@Suite("Typed records on the local store")
struct TypedRecordTests {
    static let modules = [PlacesModule.module, TravelLogModule.module, GroupDecisionsModule.module, LanguageExchangeModule.module]
    static let records: [any TableRecord.Type] = PlacesRecords.all + TravelLogRecords.all + GroupDecisionsRecords.all + LanguageExchangeRecords.all
    static let clockTime: Int64 = 1_795_000_000_123_456

    /// A store of every shipped table; without `checks`, their CHECK constraints are left out (a sample row of every
    /// column type does not mean anything an app would accept; the checks have tests of their own).
    static func store(ids: IDGenerator = .sequential(), checks: Bool = true) throws -> LocalStore {
        let directory = NSTemporaryDirectory() + "caravan-typed-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let tables = modules.flatMap(\.tables).filter { $0.exposure == .rest }.map { table in
            checks ? table : TableSchema(table.name, columns: table.columns, primaryKey: table.primaryKey)
        }
        return try LocalStore(path: directory + "/client.sqlite", tables: tables, clock: .fixed(microseconds: clockTime), ids: ids)
    }

    /// A row of `table` with a value of its type in every column (`variant` changes each), or null in the nullable
    /// ones when `nulls`.
    static func sampleRow(_ table: TableSchema, variant: Int, nulls: Bool) -> JSONValue {
        .object(table.columns.enumerated().map { index, column in
            if nulls, column.isNullable, column.defaultValue == nil, !table.primaryKey.contains(column.name) { return (column.name, .null) }
            let value: JSONValue = switch column.type {
            case .text: .string("\(column.name) \(variant) — é")
            case .integer: .integer(Int64(40 + variant + index))
            case .double: .double(2.5 + Double(variant))
            case .decimal: .double(1.25 + Double(variant))
            case .boolean: .bool((variant + index) % 2 == 0)
            case .uuid: .string(String(format: "%08x-0000-4000-8000-%012x", variant, index))
            case .timestamp: .string(Timestamp.format(microseconds: 1_790_000_000_000_001 + Int64(variant * 1_000_000 + index)))
            case .date: .string("2026-11-2\(variant % 10)")
            case .json: .object([("list", .array([.integer(1), .string("x")])), ("n", .double(0.5)), ("ok", .bool(true))])
            case .textArray: .array([.string("a\(variant)"), .string("b")])
            }
            return (column.name, value)
        })
    }

    @Test func everyRecordListIsEveryTableServedOverREST() {
        let tables = Set(Self.modules.flatMap(\.tables).filter { $0.exposure == .rest }.map(\.name))
        #expect(Set(Self.records.map { $0.table.name }) == tables)
        #expect(Self.records.count == tables.count)
    }

    /// Every column type of every shipped table: JSON row (as REST sends it) → record → local store → record, equal;
    /// nullable columns both filled and null.
    @Test(arguments: records.map { $0.table.name })
    func aRecordRoundTripsThroughTheLocalStore(table name: String) async throws {
        let type = try #require(Self.records.first { $0.table.name == name })
        let table = try #require(Self.modules.flatMap(\.tables).first { $0.name == name })
        try await Self.roundTrip(type, table: table)
    }

    static func roundTrip<Record: TableRecord>(_ type: Record.Type, table: TableSchema) async throws {
        let store = try store(checks: false)
        for (variant, nulls) in [(1, false), (2, true)] {
            let record = try RecordCoding.decode(Record.self, from: sampleRow(table, variant: variant, nulls: nulls))
            let stored = try await store.insert(record)
            #expect(stored == record)
            let key = sampleRow(table, variant: variant, nulls: nulls)
            let matching = Predicate.and(table.primaryKey.map { column in
                guard case .string(let text)? = key[column] else { return .column(column, .eq, key[column]?.jsonText ?? "") }
                return .column(column, .eq, text)
            })
            let fetched = try await store.fetch(Record.self, where: matching)
            #expect(fetched == [record], "\(table.name), nulls: \(nulls)")
        }
        #expect(try await store.fetch(Record.self).count == 2)
        #expect(try store.outbox().count == 2)
    }

    /// A generated record sets any of its columns from a row's JSON value (`setColumn`) as reading the whole row would:
    /// each column of one sample row set in turn on the record of another gives the record of the first.
    @Test(arguments: records.map { $0.table.name })
    func settingEachColumnGivesWhatReadingTheRowGives(table name: String) throws {
        let type = try #require(Self.records.first { $0.table.name == name })
        let table = try #require(Self.modules.flatMap(\.tables).first { $0.name == name })
        try Self.setEachColumn(type, table: table)
    }

    /// A generated record writes its row directly (`encodedRow`) as encoding it writes it: the same pairs in the same
    /// order, nil optionals left out.
    @Test(arguments: records.map { $0.table.name })
    func aGeneratedRowIsWhatEncodingWrites(table name: String) throws {
        let type = try #require(Self.records.first { $0.table.name == name })
        let table = try #require(Self.modules.flatMap(\.tables).first { $0.name == name })
        try Self.encodeRows(type, table: table)
    }

    static func encodeRows<Record: TableRecord>(_ type: Record.Type, table: TableSchema) throws {
        for (variant, nulls) in [(1, false), (2, true)] {
            let record = try RecordCoding.decode(Record.self, from: sampleRow(table, variant: variant, nulls: nulls))
            let direct = try record.encodedRow()
            let encoded = try RecordCoding.json(record)
            guard case .object(let directPairs) = direct, case .object(let encodedPairs) = encoded else {
                Issue.record("\(table.name): not an object")
                return
            }
            #expect(directPairs.map(\.key) == encodedPairs.map(\.key), "\(table.name), nulls: \(nulls)")
            #expect(direct == encoded, "\(table.name), nulls: \(nulls)")
        }
    }

    static func setEachColumn<Record: TableRecord>(_ type: Record.Type, table: TableSchema) throws {
        for nulls in [false, true] {
            let target = sampleRow(table, variant: 2, nulls: nulls)
            var record = try RecordCoding.decode(Record.self, from: sampleRow(table, variant: 1, nulls: false))
            for column in table.columns {
                #expect(try record.setColumn(column.name, to: target[column.name] ?? .null), "\(table.name).\(column.name)")
            }
            #expect(record == (try RecordCoding.decode(Record.self, from: target)), "\(table.name), nulls: \(nulls)")
            #expect(try !record.setColumn("no_such_column", to: .null))
        }
        var record = try RecordCoding.decode(Record.self, from: sampleRow(table, variant: 1, nulls: false))
        if let column = table.columns.first(where: { $0.type != .json && $0.type != .text && $0.type != .date }) {
            #expect(throws: CaravanError.self, "\(table.name).\(column.name) refuses an object") {
                try record.setColumn(column.name, to: .object([("not", .string("a value"))]))
            }
        }
    }

    /// A typed insert returns the row as the store holds it, every default it took included: equal to the same row
    /// fetched (read whole) — for generated records (which set the filled columns) and a hand-written one (whose row is
    /// read whole).
    @Test(arguments: records.map { $0.table.name })
    func aTypedInsertReturnsTheStoredRowWithItsDefaults(table name: String) async throws {
        let type = try #require(Self.records.first { $0.table.name == name })
        let table = try #require(Self.modules.flatMap(\.tables).first { $0.name == name })
        try await Self.insertLeavingDefaults(type, table: table, into: try Self.store(checks: false))
    }

    @Test func aHandWrittenRecordGetsItsDefaultsByReadingTheRow() async throws {
        struct Note: TableRecord {
            static let table = TableHandle("notes", primaryKey: ["id"])
            var id: String
            var body: String?
            var stars: Int?
            var createdAt: Date?
            enum CodingKeys: String, CodingKey { case id, body, stars, createdAt = "created_at" }
        }
        let table = TableSchema("notes", columns: [
            Column("id", .text, nullable: false), Column("body", .text), Column("stars", .integer, default: .value(.integer(3))),
            Column("created_at", .timestamp, default: .now),
        ], primaryKey: ["id"], synced: true)
        let directory = NSTemporaryDirectory() + "caravan-typed-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try LocalStore(path: directory + "/client.sqlite", tables: [table], clock: .fixed(microseconds: Self.clockTime))
        let stored = try await store.insert(Note(id: "n1", body: "hello"))
        #expect(stored.stars == 3 && stored.createdAt.map(RecordCoding.microseconds) == Self.clockTime)
        try await Self.insertLeavingDefaults(Note.self, table: table, into: store)
    }

    static func insertLeavingDefaults<Record: TableRecord>(_ type: Record.Type, table: TableSchema, into store: LocalStore) async throws {
        let row = sampleRow(table, variant: 3, nulls: true)
        let defaulted = JSONValue.object(table.columns.map { column in
            let leftOut = column.defaultValue != nil && column.isNullable
            return (column.name, leftOut ? .null : row[column.name] ?? .null)
        })
        let stored = try await store.insert(try RecordCoding.decode(Record.self, from: defaulted))
        let encoded = try RecordCoding.json(stored)
        let key = Predicate.and(table.primaryKey.map { column in
            guard case .string(let text)? = encoded[column] else { return .column(column, .eq, encoded[column]?.jsonText ?? "") }
            return .column(column, .eq, text)
        })
        let fetched = try await store.fetch(Record.self, where: key)
        #expect(fetched == [stored], "\(table.name)")
    }

    /// A nil property of a column with a default takes it: the time from the injected clock, taken at the write and
    /// sent with it (the server keeps when the row was written, not when it synced).
    @Test func defaultsAreTakenOnTheDeviceAtWriteTime() async throws {
        let store = try Self.store()
        let user = UUID(uuidString: "aaaaaaaa-0000-4000-8000-00000000000a")!
        let stored = try await store.insert(Favorite(id: UUID(uuidString: "bbbbbbbb-0000-4000-8000-00000000000b")!, userID: user, placeID: "kudu"))
        #expect(stored.createdAt.map(RecordCoding.microseconds) == Self.clockTime)
        let review = try await store.insert(Review(id: UUID(uuidString: "cccccccc-0000-4000-8000-00000000000c")!, userID: user, placeID: "kudu", rating: 4))
        #expect(review.isVerified == false && review.helpfulCount == 0, "value defaults fill the local row")
        let sent = try store.outbox().map(\.record)
        #expect(sent[0]?["created_at"] == .string(Timestamp.format(microseconds: Self.clockTime)))
        #expect(sent[1]?["updated_at"] == .string(Timestamp.format(microseconds: Self.clockTime)))
        #expect(sent[1]?["is_verified"] == nil, "a value default is the server's as well: not sent")
        await #expect(throws: ClientError.self) {
            try await store.insert(Review(id: UUID(), userID: user, placeID: "kudu", rating: 9))  // valid_review_rating: 1…5
        }
        #expect(try store.outbox().count == 2)
    }

    @Test func filtersOrderAndLimitRunOnTheStore() async throws {
        let store = try Self.store()
        let names = ["Kudu", "kahwa house", "Najd Village", "Al Baik"]
        for (index, name) in names.enumerated() {
            try await store.insert(Place(id: "p\(index)", nameAr: "مكان \(index)", nameEn: name, category: index % 2 == 0 ? "cafe" : "restaurant",
                                         categoryAr: "فئة", googleRating: Decimal(1 + index), ratingCount: index * 10,
                                         tags: index == 1 ? ["coffee", "wifi"] : ["family"], isTrending: index >= 2))
        }
        let cafes = try await store.fetch(Place.self, where: .column(Place.CodingKeys.category, .eq, "cafe"), order: [OrderTerm(Place.CodingKeys.nameEn)])
        #expect(cafes.map(\.id) == ["p0", "p2"])
        let topTwo = try await store.fetch(Place.self, order: [OrderTerm(Place.CodingKeys.ratingCount, .descending)], limit: 2)
        #expect(topTwo.map(\.id) == ["p3", "p2"])
        let insensitive = try await store.fetch(Place.self, where: .column(Place.CodingKeys.nameEn, .ilike, "k%"))
        #expect(insensitive.map(\.id) == ["p0", "p1"], "ILIKE folds case as the server does")
        let either = try await store.fetch(Place.self, where: .or([.column(Place.CodingKeys.isTrending, .eq, true), .column(Place.CodingKeys.id, in: ["p0"])]))
        #expect(either.map(\.id) == ["p0", "p2", "p3"])
        let tagged = try await store.fetch(Place.self, where: .column(Place.CodingKeys.tags, .cs, "{wifi}"))
        #expect(tagged.map(\.id) == ["p1"], "array containment, as REST's cs")
        let query = try QueryParser.parseRead(QueryString("rating_count=lt.30&order=rating_count.desc&limit=1"))
        #expect(try await store.fetch(Place.self, query: query).map(\.id) == ["p2"], "a REST query string, parsed once, runs locally")
    }

    @Test func aBadFilterIsRefusedWithItsCode() async throws {
        let store = try Self.store()
        let error = await #expect(throws: ClientError.self) {
            _ = try await store.fetch(Place.self, where: .column("no_such_column", .eq, "x"))
        }
        #expect(error?.code == CaravanError.Code.unknownColumn.description)
        let badValue = await #expect(throws: ClientError.self) {
            _ = try await store.fetch(Place.self, where: .column(Place.CodingKeys.ratingCount, .eq, "many"))
        }
        #expect(badValue?.code == CaravanError.Code.invalidValue.description)
    }

    @Test func updateQueuesTheChangedColumnsAndDeleteTheKey() async throws {
        let store = try Self.store()
        let user = UUID(uuidString: "aaaaaaaa-0000-4000-8000-00000000000a")!
        let id = UUID(uuidString: "bbbbbbbb-0000-4000-8000-00000000000b")!
        var favorite = Favorite(id: id, userID: user, placeID: "kudu", note: "first", createdAt: Date(timeIntervalSince1970: 1_795_000_000))
        try await store.insert(favorite)
        favorite.note = "second"
        try await store.update(favorite)
        try await store.update(favorite)  // unchanged: nothing queued
        #expect(try await store.fetch(Favorite.self) == [favorite])
        try await store.delete(favorite)
        #expect(try await store.fetch(Favorite.self).isEmpty)
        let outbox = try store.outbox()
        #expect(outbox.map(\.operation) == ["insert", "update", "delete"])
        #expect(outbox[1].record == .object([("note", .string("second"))]))
        #expect(outbox[2].key == .object([("id", .string("bbbbbbbb-0000-4000-8000-00000000000b"))]), "uuids are written in canonical (lower) case")
        await #expect(throws: ClientError.self) { try await store.update(favorite) }
    }

    /// The clock and the ids a write records are the injected ones; the write runs off the caller's actor.
    @Test func writesUseTheInjectedClockAndIdsAndLeaveTheCallersActor() async throws {
        let onCaller = Mutex<[Bool]>([])
        let sequence = IDGenerator.sequential()
        let store = try Self.store(ids: IDGenerator {
            onCaller.withLock { $0.append(DispatchQueue.getSpecific(key: QueueActor.marker) == true) }
            return UUID(uuidString: sequence.next())!
        })
        let caller = QueueActor()
        let ranOnCaller = await caller.insertChecking(into: store)
        #expect(ranOnCaller, "the caller's own code runs on its queue")
        let entry = try #require(try store.outbox().first)
        #expect(entry.mutationID == "00000000-0000-4000-8000-000000000001")
        #expect(entry.createdAt == Timestamp.format(microseconds: Self.clockTime))
        #expect(onCaller.withLock { $0 } == [false], "the mutation id was made inside the write, off the caller's actor")
    }
}

/// An actor running on a queue of its own (marked), so that a test can tell whether code runs on it.
private actor QueueActor {
    static let marker = DispatchSpecificKey<Bool>()
    private let executor = QueueExecutor()

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func insertChecking(into store: LocalStore) async -> Bool {
        let favorite = Favorite(id: UUID(uuidString: "bbbbbbbb-0000-4000-8000-00000000000b")!, userID: UUID(uuidString: "aaaaaaaa-0000-4000-8000-00000000000a")!,
                                placeID: "kudu", createdAt: Date(timeIntervalSince1970: 1_795_000_000))
        let before = DispatchQueue.getSpecific(key: Self.marker) == true
        _ = try? await store.insert(favorite)
        return before
    }
}

private final class QueueExecutor: SerialExecutor, @unchecked Sendable {
    let queue: DispatchQueue

    init() {
        queue = DispatchQueue(label: "caravan.test.caller")
        queue.setSpecific(key: QueueActor.marker, value: true)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

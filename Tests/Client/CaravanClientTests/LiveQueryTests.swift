@testable import CaravanClient
import CaravanClientModels
import CaravanCore
import Foundation
import Observation
import Places
import Synchronization
import Testing

/// Live queries: a result array now and after each committed transaction that changes the query's table, never a
/// half-applied server transaction, a local write at once.
@Suite("Live queries", .timeLimit(.minutes(5)))
struct LiveQueryTests {
    static let user = UUID(uuidString: Fixture.user)!
    static let placesTable = PlacesModule.module.tables.first { $0.name == "places" }!

    static func favorite(_ n: Int, place: String = "kudu") -> Favorite {
        Favorite(id: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))!, userID: user, placeID: place, note: "n\(n)",
                 createdAt: Date(timeIntervalSince1970: 1_795_000_000))
    }

    /// A place row with a value in every column (ids `place-<n>`), within the table's checks (the local store refuses
    /// a row that breaks them).
    static func placeRow(_ n: Int) -> JSONValue {
        guard case .object(var pairs) = TypedRecordTests.sampleRow(Self.placesTable, variant: n % 7, nulls: false) else { return .null }
        let valid: [String: JSONValue] = ["id": .string("place-\(n)"), "latitude": .double(24.7), "longitude": .double(46.7),
                                          "google_rating": .double(4.5), "price_range": .string("$$")]
        for index in pairs.indices { if let value = valid[pairs[index].key] { pairs[index].value = value } }
        return .object(pairs)
    }

    @Test func itEmitsOnlyWhenItsTableChangesAndTheResultDiffers() async throws {
        let store = try Fixture.store()
        var counts: [Int] = []
        for try await favorites in try store.live(Favorite.self, where: .column(Favorite.CodingKeys.placeID, .eq, "kudu")) {
            counts.append(favorites.count)
            switch favorites.count {
            case 0:
                // Another table, then a row the filter leaves out: neither changes the result, so nothing is emitted.
                try store.insert("places", Self.placeRow(1), now: Fixture.now)
                try await store.insert(Self.favorite(1, place: "elsewhere"))
                try await store.insert(Self.favorite(2))
            case 1:
                try await store.insert(Self.favorite(3))
            default:
                break
            }
            if favorites.count == 2 { break }
        }
        #expect(counts == [0, 1, 2], "one emission per change of the result, none for other tables or rows outside it")
    }

    @Test func aLocalWriteIsInTheNextResultAndOrderAndLimitApply() async throws {
        let store = try Fixture.store()
        let results = try store.live(Favorite.self, order: [OrderTerm(Favorite.CodingKeys.note, .descending)], limit: 2)
        var iterator = results.makeAsyncIterator()
        #expect(try await iterator.next() == [])
        try await store.insert(Self.favorite(1))
        #expect(try await iterator.next()?.map(\.note) == ["n1"], "no sync needed: the local write is the next result")
        try await store.insert(Self.favorite(2))
        try await store.insert(Self.favorite(3))
        var last: [Favorite]?
        repeat { last = try await iterator.next() } while last?.first?.note != "n3" && last != nil
        #expect(last?.map(\.note) == ["n3", "n2"], "newest notes first, two at most")
    }

    @Test func aBadFilterIsRefusedWithItsCode() throws {
        let store = try Fixture.store()
        #expect { _ = try store.live(Favorite.self, where: .column("no_such_column", .eq, "x")) } throws: { error in
            (error as? ClientError)?.code == CaravanError.Code.unknownColumn.description
        }
    }

    @Test func cancellingTheIteratingTaskEndsTheSequence() async throws {
        let store = try Fixture.store()
        let results = try store.live(Favorite.self)
        let (started, began) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            var seen = 0
            for try await _ in results {
                seen += 1
                began.yield()
            }
            return seen
        }
        var signals = started.makeAsyncIterator()
        await signals.next()
        task.cancel()
        let seen = try await task.value   // returns: the sequence ended
        #expect(seen == 1)
        try await store.insert(Self.favorite(1))
    }

    /// A pull of 10,000 places over ten pages (a snapshot taken at one point, like a server transaction, split by the
    /// page limit); in the middle, a local write. The live query sees the local write alone at once, then all
    /// 10,000 places together — never a page of them.
    @Test func aPullSplitOverPagesIsNeverSeenHalfApplied() async throws {
        let store = try Fixture.store()
        let results = try store.live(Place.self)
        var iterator = results.makeAsyncIterator()
        let seen = Mutex<[Int]>([])
        let (localSeen, localSeenSignal) = AsyncStream.makeStream(of: Void.self)
        let transport = PagedPullTransport(pages: 10, perPage: 1_000, row: Self.placeRow) { page in
            if page == 5 {
                // Mid-pull (four pages fetched): a local write, visible at once.
                try store.insert("places", Self.placeRow(99_999), now: Fixture.now)
                var signals = localSeen.makeAsyncIterator()
                await signals.next()
            } else if page > 1 {
                try await Task.sleep(for: .milliseconds(20))   // room for a partial state to be emitted, were there one
            }
        }
        let api = CaravanAPI(baseURL: "http://fake", apiKey: "anon", transport: transport)
        let session = SessionManager(store: store, api: api, now: { 1_795_000_000 })
        let engine = SyncEngine(store: store, api: api, session: session, pullLimit: 1_000, now: { 1_795_000_000_000_000 })
        let sync = Task { try await engine.sync(tables: ["places"]) }
        while let places = try await iterator.next() {
            seen.withLock { $0.append(places.count) }
            if places.count == 1 { localSeenSignal.yield() }
            if places.count == 10_001 { break }
        }
        let report = try await sync.value
        #expect(report.pulled == 10_000)
        #expect(seen.withLock { $0 } == [0, 1, 10_001], "the local write at once, the ten pages together")
        #expect(transport.requests.withLock { $0 } == 10)
    }

    /// A result is read as stored bytes and only changed rows are decoded: when a new first row moves every other
    /// one down a place (rows then looked up by value) and one of them changes, the result is still what a fresh
    /// read gives.
    @Test func aResultWhoseRowsMovedEqualsAFreshRead() async throws {
        let store = try Fixture.store()
        func upsert(_ rows: [JSONValue]) throws {
            let changes = rows.enumerated().map { index, row in
                PulledRow(seq: Int64(index + 1), table: "places", operation: .upsert, key: .object([("id", row["id"] ?? .null)]), record: row)
            }
            _ = try store.apply(PullReply(changes: changes, cursor: nil, hasMore: false), scope: ["places"], now: 1)
        }
        try upsert((10...49).map(Self.placeRow))
        let order = [OrderTerm(Place.CodingKeys.id)]
        var results = try store.live(Place.self, order: order).makeAsyncIterator()
        #expect(try await results.next()?.count == 40)
        guard case .object(var changed) = Self.placeRow(30) else { return }
        changed[changed.firstIndex { $0.key == "name_en" }!].value = .string("changed")
        try upsert([Self.placeRow(1), .object(changed)])
        let next = try #require(try await results.next())
        #expect(next.count == 41)
        #expect(next.map(\.id).first == "place-1")
        #expect(next == (try await store.fetch(Place.self, order: order)))
    }

    @MainActor
    @Test func liveQueryIsObservable() async throws {
        let store = try Fixture.store()
        let query = try LiveQuery(store, Favorite.self)
        await Self.change(of: { query.isLoaded })
        #expect(query.isLoaded && query.records.isEmpty)
        try await store.insert(Self.favorite(1))
        await Self.change(of: { query.records })
        #expect(query.records == [Self.favorite(1)])
        try await store.delete(Self.favorite(1))
        await Self.change(of: { query.records })
        #expect(query.records.isEmpty)
        query.cancel()
    }

    /// Waits until a property `read` reads changes (`withObservationTracking`).
    @MainActor
    static func change<T>(of read: @escaping @MainActor () -> T) async {
        await withCheckedContinuation { continuation in
            withObservationTracking { _ = read() } onChange: { continuation.resume() }
        }
    }
}

/// A server's `/sync/v1/pull` that serves `pages` pages of `perPage` upserts (one snapshot), running `beforePage`
/// before answering each.
final class PagedPullTransport: HTTPTransport {
    let pages: Int
    let perPage: Int
    let row: @Sendable (Int) -> JSONValue
    let beforePage: @Sendable (Int) async throws -> Void
    let requests = Mutex(0)

    init(pages: Int, perPage: Int, row: @escaping @Sendable (Int) -> JSONValue, beforePage: @escaping @Sendable (Int) async throws -> Void) {
        self.pages = pages
        self.perPage = perPage
        self.row = row
        self.beforePage = beforePage
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard request.url.contains("/sync/v1/pull") else { return TransportResponse(status: 404, headers: [], body: Array("{}".utf8)) }
        let page = request.url.components(separatedBy: "cursor=page").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) }.map { $0 + 1 } ?? 1
        requests.withLock { $0 += 1 }
        try await beforePage(page)
        let changes: [JSONValue] = ((page - 1) * perPage..<page * perPage).map { n in
            let record = row(n)
            return .object([("seq", .integer(Int64(n + 1))), ("table", .string("places")), ("op", .string("upsert")),
                            ("key", .object([("id", record["id"] ?? .null)])), ("record", record)])
        }
        let body = JSONValue.object([("changes", .array(changes)), ("cursor", .string("page\(page)")), ("has_more", .bool(page < pages))])
        return TransportResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(body.jsonText.utf8))
    }
}

/// A whole-table live query follows the rows each transaction writes and places them itself (`LocalRows.apply`):
/// checked against SQL's own answer — after every one of 200 random transactions (server upserts and
/// deletes of one to forty rows, local inserts, updates and deletes), the query's next result is what a fresh read
/// gives, and a transaction that changes nothing the query shows emits nothing.
@Suite("Live queries follow changed rows", .timeLimit(.minutes(5)))
struct LiveRowsOracleTests {
    static func place(_ n: Int, _ random: inout SplitMix64) -> JSONValue {
        guard case .object(var pairs) = LiveQueryTests.placeRow(n) else { return .null }
        // Few distinct ratings and names (ties, broken by the key) and some NULLs.
        let rating: JSONValue = Int.random(in: 0..<5, using: &random) == 0 ? .null : .double([3.5, 4.0, 4.5][Int.random(in: 0..<3, using: &random)])
        let name: JSONValue = Int.random(in: 0..<6, using: &random) == 0 ? .null : .string(["Kudu", "kudu", "Najd", "ب", "أ"][Int.random(in: 0..<5, using: &random)])
        for index in pairs.indices {
            if pairs[index].key == "google_rating" { pairs[index].value = rating }
            if pairs[index].key == "name_en" { pairs[index].value = name }
        }
        return .object(pairs)
    }

    @Test func everyResultEqualsAFreshRead() async throws {
        let store = try Fixture.store()
        var random = SplitMix64(state: 27)   // seeded: the same transactions every run
        var seq: Int64 = 0
        func pull(_ changes: [(Int, Bool)], _ random: inout SplitMix64) throws {
            let rows = changes.map { n, delete in
                seq += 1
                let key = JSONValue.object([("id", .string("place-\(n)"))])
                return delete ? PulledRow(seq: seq, table: "places", operation: .delete, key: key, record: nil)
                    : PulledRow(seq: seq, table: "places", operation: .upsert, key: key, record: Self.place(n, &random))
            }
            _ = try store.apply(PullReply(changes: rows, cursor: nil, hasMore: false), scope: ["places"], now: 1)
        }
        try pull((0..<60).map { ($0, false) }, &random)
        let queries: [(CaravanCore.Predicate, [OrderTerm])] = [
            (.constant(true), [OrderTerm(Place.CodingKeys.nameEn)]),
            (.constant(true), [OrderTerm(column: "google_rating", direction: .descending, nulls: .last), OrderTerm(Place.CodingKeys.nameEn, .descending)]),
            (.column(Place.CodingKeys.googleRating, .gte, 4.0), [OrderTerm(column: "name_en", direction: .ascending, nulls: .first)]),
        ]
        var iterators = try queries.map { try store.live(Place.self, where: $0.0, order: $0.1).makeAsyncIterator() }
        var last: [[Place]] = []
        for index in iterators.indices { last.append(try #require(try await iterators[index].next())) }
        var emissions = 0
        for step in 0..<200 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:   // a server transaction: mostly one row, sometimes many (read whole past 32)
                let count = [1, 1, 2, 5, 40][Int.random(in: 0..<5, using: &random)]
                try pull((0..<count).map { _ in (Int.random(in: 0..<90, using: &random), Int.random(in: 0..<4, using: &random) == 0) }, &random)
            case 6..<8:   // a local insert or update
                let n = Int.random(in: 0..<90, using: &random)
                let row = Self.place(n, &random)
                if try await store.fetch(Place.self, where: .column(Place.CodingKeys.id, .eq, "place-\(n)")).isEmpty {
                    try store.insert("places", row, now: Fixture.now)
                } else {
                    try store.update("places", key: .object([("id", .string("place-\(n)"))]),
                                     .object([("google_rating", row["google_rating"] ?? .null), ("name_en", row["name_en"] ?? .null)]), now: Fixture.now)
                }
            default:   // a local delete
                let present = try await store.fetch(Place.self)
                if let victim = present.randomElement(using: &random) {
                    try store.delete("places", key: .object([("id", .string(victim.id))]), now: Fixture.now)
                }
            }
            for (index, query) in queries.enumerated() {
                let fresh = try await store.fetch(Place.self, where: query.0, order: query.1)
                guard fresh != last[index] else { continue }   // nothing it shows changed: no result is waiting
                let next = try #require(try await iterators[index].next())
                #expect(next.map(\.id) == fresh.map(\.id), "query \(index), step \(step)")
                #expect(next.elementsEqual(fresh), "query \(index), step \(step): the same rows, every column")
                last[index] = next
                emissions += 1
            }
        }
        #expect(emissions > 200, "the transactions changed what the queries show")
    }
}

/// A table with a column named `rowid` (which then means the column, not SQLite's rowid) is followed by reading
/// the query again after each commit: its results are still right.
@Suite("Live queries of a table with a rowid column", .timeLimit(.minutes(1)))
struct LiveRowidColumnTests {
    struct Entry: TableRecord {
        static let table = TableHandle("entries", primaryKey: ["id"])
        var id: String
        var rowid: Int64?
    }

    @Test func aWholeTableQueryFollowsItsWrites() async throws {
        let directory = NSTemporaryDirectory() + "caravan-rowid-column-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let table = TableSchema("entries", columns: [Column("id", .text, nullable: false), Column("rowid", .integer)], primaryKey: ["id"], synced: true)
        let store = try LocalStore(path: directory + "/client.sqlite", tables: [table])
        var results = try store.live(Entry.self, order: [OrderTerm(column: "rowid", direction: .descending)]).makeAsyncIterator()
        #expect(try await results.next() == [])
        try await store.insert(Entry(id: "a", rowid: 1))
        #expect(try await results.next() == [Entry(id: "a", rowid: 1)])
        try await store.insert(Entry(id: "b", rowid: 7))
        #expect(try await results.next() == [Entry(id: "b", rowid: 7), Entry(id: "a", rowid: 1)])
        try await store.update(Entry(id: "b", rowid: 0))
        #expect(try await results.next() == [Entry(id: "a", rowid: 1), Entry(id: "b", rowid: 0)])
    }
}

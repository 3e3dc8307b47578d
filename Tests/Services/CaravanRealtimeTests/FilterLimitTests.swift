import CaravanCore
import CaravanRealtime
import CaravanTesting
import Testing

/// A realtime binding's filter is bounded as a REST filter is (conditions per `query_max_filters`, and the
/// grammars inside a value: JSON paths, `fts` queries, lists), and a join with any filter at all is answered — an
/// accepted binding or a join error naming the problem — never a crash.
@Suite("Realtime filters under the query limits")
struct FilterLimitTests {
    @Test func conditionsAtTheLimitAreAcceptedAndOnePastRefused() throws {
        let table = try #require(testCatalog.table(named: "places"))
        let limits = QueryLimits(maxFilters: 5)
        let five = Array(repeating: "rating_count=gt.1", count: 5).joined(separator: ",")
        #expect(try RealtimeFilter.parse(five, table: table, limits: limits) != .constant(false))
        #expect { try RealtimeFilter.parse(five + ",is_active=is.true", table: table, limits: limits) } throws: { error in
            guard let error = error as? RealtimeError else { return false }
            return error.message.contains("limit of 5 filter conditions") && error.message.contains("query_max_filters")
        }
        #expect(throws: RealtimeError.self) { try RealtimeFilter.parse("rating_count=eq(any).{1,2,3,4,5,6}", table: table, limits: limits) }
        let deepFTS = "name_en=fts." + String(repeating: "!", count: QueryLimits.textQueryDepth + 1) + "x"
        #expect { try RealtimeFilter.parse(deepFTS, table: table) } throws: { ($0 as? RealtimeError)?.message.contains("\(QueryLimits.textQueryDepth)") == true }
        let deepPath = "features" + String(repeating: "->a", count: QueryLimits.jsonPathSteps + 1) + "=is.null"
        #expect { try RealtimeFilter.parse(deepPath, table: table) } throws: { ($0 as? RealtimeError)?.message.contains("\(QueryLimits.jsonPathSteps)") == true }
        // The server's setting reaches the socket: a join past it is refused with a join error.
        var limitsWithFilters = RealtimeLimits()
        limitsWithFilters.filters = limits
        var socket = machine(limits: limitsWithFilters)
        let binding = JSONValue.object([("event", .string("*")), ("schema", .string("public")), ("table", .string("places")),
                                        ("filter", .string(five + ",is_active=is.true"))])
        let reply = frames(socket.join(joinMessage(bindings: [binding]), identity: .success(anon), now: 0))
        #expect(reply.contains { $0.payload.contains("query_max_filters") }, "\(reply.map(\.payload))")
    }

    /// Seeded fuzz: random deep and wide filters (and `select`s) in joins; each is accepted or refused with a join
    /// error, and an accepted filter evaluates on rows in memory (bounded, so without deep recursion).
    @Test func fuzzedFiltersAreAcceptedOrRefused() throws {
        let table = try #require(testCatalog.table(named: "places"))
        var fuzzer = QueryFuzzer(seed: 4301, columns: ["id", "name_ar", "name_en", "rating_count", "is_active", "tags", "features", "nope"],
                                 tables: ["places"])
        let rows = try [place("p1", active: true, count: 7, name: "a,b"), place("p2", active: false, count: 0, name: "cafe riyadh")]
            .map { try ChangeRow(json: $0.jsonText, table: table) }
        var accepted = 0
        var socket = machine()
        for index in 0..<300 {
            let filter = fuzzer.realtimeFilter()
            do {
                let predicate = try RealtimeFilter.parse(filter, table: table)
                accepted += 1
                for row in rows { _ = predicate.evaluate(row.value) }
            } catch {
                #expect(!error.message.isEmpty)
            }
            if index % 10 == 0 {
                let binding = JSONValue.object([("event", .string("*")), ("schema", .string("public")), ("table", .string("places")),
                                                ("filter", .string(filter))])
                let reply = frames(socket.join(joinMessage(topic: "realtime:t\(index)", bindings: [binding]), identity: .success(anon), now: 0))
                #expect(!reply.isEmpty, "a join is always answered")
            }
        }
        #expect(accepted > 20 && accepted < 280, "\(accepted) of 300 accepted")
    }
}

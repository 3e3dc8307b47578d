import CaravanCore
import CaravanTesting
import CaravanRealtime
import CaravanServer
import CaravanTesting
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// One request must never end the server. Every grammar of the query is bounded (`QueryLimits`), each
/// limit is served at its value and answered `400 PGRST100`, naming it, one past it; a query string past its length
/// is `414`; a random mix of deep and wide queries is always answered below 500 while `/health` keeps answering.
@Suite("Query limits")
struct QueryLimitTests {
    /// `and(id.not.is.null,not.or(id.not.is.null,not.and(…)))`: the costliest logic-tree shape for SQL parsers, with
    /// `groups` groups (the outermost `or=(…)` included).
    static func logicTree(groups: Int) -> String {
        var text = "id.is.null"
        for level in 1..<groups { text = "id.not.is.null,not.\(level % 2 == 0 ? "and" : "or")(\(text))" }
        return "(" + text + ")"
    }

    /// `id,reviews(id,places(id,reviews(…)))` nested `depth` embeds deep.
    static func embeds(_ depth: Int) -> String {
        var inner = "id"
        for level in stride(from: depth, through: 1, by: -1) { inner = "id,\(level % 2 == 1 ? "reviews" : "places")(\(inner))" }
        return inner
    }

    private func expectLimit(_ response: TestResponse, naming limit: Int, _ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == .badRequest, "\(comment) \(response.text.prefix(300))", sourceLocation: sourceLocation)
        #expect(response.errorCode == "PGRST100", "\(comment) \(response.text.prefix(300))", sourceLocation: sourceLocation)
        guard case .string(let message)? = response.json?["message"] else { Issue.record("no message", sourceLocation: sourceLocation); return }
        #expect(message.contains("\(limit)"), "\(message)", sourceLocation: sourceLocation)
    }

    @Test(arguments: Engine.allCases)
    func aLogicTreeAtItsLimitIsServedAndOnePastItIsRefused(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let limit = QueryLimits.logicTreeDepth
        let atLimit = try await d.request(.anon, .get, "/rest/v1/places?select=id&or=\(QueryFuzzer.encode(Self.logicTree(groups: limit)))")
        #expect(atLimit.status == .ok, "\(atLimit.text.prefix(300))")
        let past = try await d.request(.anon, .get, "/rest/v1/places?select=id&or=\(QueryFuzzer.encode(Self.logicTree(groups: limit + 1)))")
        expectLimit(past, naming: limit)
        // Inside an embed, and as the filter of a write and of an RPC result, the same tree is refused the same way.
        let embedded = try await d.request(.anon, .get, "/rest/v1/places?select=id,reviews(id)&reviews.or=\(QueryFuzzer.encode(Self.logicTree(groups: limit + 1)))")
        expectLimit(embedded, naming: limit, "embed")
        let patch = try await d.request(.service, .patch, "/rest/v1/places?or=\(QueryFuzzer.encode(Self.logicTree(groups: limit + 1)))", body: #"{"phone":"1"}"#)
        expectLimit(patch, naming: limit, "patch")
        let rpc = try await d.request(.anon, .get, "/rest/v1/rpc/places_in_category?cat=cafe&or=\(QueryFuzzer.encode(Self.logicTree(groups: limit + 1)))")
        expectLimit(rpc, naming: limit, "rpc")
    }

    /// Hostile requests: a logic tree 6,500 groups deep and a select 4,000 embeds deep are answered, quickly,
    /// without recursion (414 at the default query length, 400 when the length allows them).
    @Test(arguments: Engine.allCases)
    func theIssuesDeepRequestsAreAnswered(engine: Engine) async throws {
        var d = try await PolicyDeployment.make(engine: engine)
        let deepTree = "(" + String(repeating: "and(", count: 6_500) + "id.eq.1" + String(repeating: ")", count: 6_501)
        let deepSelect = String(repeating: "reviews(id,places(id,", count: 2_000) + "id" + String(repeating: "))", count: 2_000)
        expectLimit(try await d.request(.anon, .get, "/rest/v1/places?or=\(deepTree)"), naming: QueryLimits.logicTreeDepth)
        d.deployment.configuration.queryLimits.maxQueryLength = 16 * 1024
        let tooLong = try await d.request(.anon, .get, "/rest/v1/places?or=\(deepTree)")
        #expect(tooLong.status == .uriTooLong && tooLong.errorCode == "CARAVAN_URI_TOO_LONG", "\(tooLong.text.prefix(300))")
        d.deployment.configuration.queryLimits.maxQueryLength = 1 << 20
        expectLimit(try await d.request(.anon, .get, "/rest/v1/places?select=id,\(deepSelect)"), naming: QueryLimits.selectDepth)
        let fts = "/rest/v1/places?select=id&name_en=fts.\(String(repeating: "!", count: 20_000))x"
        expectLimit(try await d.request(.anon, .get, fts), naming: QueryLimits.textQueryDepth)
        let health = try await d.request(.anon, .get, "/health")
        #expect(health.status == .ok)
    }

    /// A six-deep read is served on both engines; SQLite serves embeds 6 deep, PostgreSQL 16, and one
    /// more level is refused naming the depth.
    @Test(arguments: Engine.allCases)
    func embedsNestAsDeepAsTheirEngineServes(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let issue = "id,reviews(id,places(id,id,reviews(id,places(id,id,reviews(id,places(id,id))))))"
        let six = try await d.request(.anon, .get, "/rest/v1/places?select=\(issue)&id=eq.cafe-nour")
        #expect(six.status == .ok, "\(six.text.prefix(300))")
        #expect(six.text.contains(#""places":{"id":"cafe-nour""#) && six.text.components(separatedBy: #""reviews":[{"id":"#).count == 4,
                "\(six.text.prefix(600))")
        let served = QueryLimits.embedDepth(on: engine == .sqlite ? .sqlite : .postgres)
        #expect(served == (engine == .sqlite ? 6 : 16))
        let deepest = try await d.request(.anon, .get, "/rest/v1/places?select=\(Self.embeds(served))")
        #expect(deepest.status == .ok, "\(deepest.text.prefix(300))")
        expectLimit(try await d.request(.anon, .get, "/rest/v1/places?select=\(Self.embeds(served + 1))"), naming: served)
        // A spread counts as a level too.
        let spread = try await d.request(.anon, .get, "/rest/v1/reviews?select=rating,...places(name_en)")
        #expect(spread.status == .ok, "\(spread.text.prefix(300))")
    }

    /// Full-text queries, JSON paths, order terms, lists and selected values: served at their limit, refused past it.
    @Test(arguments: Engine.allCases)
    func everyOtherGrammarIsServedAtItsLimitAndRefusedPastIt(engine: Engine) async throws {
        var d = try await PolicyDeployment.make(engine: engine)
        d.deployment.configuration.queryLimits.maxQueryLength = 1 << 20  // a list of 10,000 values is longer than 32 KiB
        func fts(_ depth: Int) -> String {
            var query = "cafe"
            for level in 0..<depth { query = level % 2 == 0 ? "!\(query)" : "(\(query))" }
            return "/rest/v1/places?select=id&name_en=fts.\(QueryFuzzer.encode(query))"
        }
        #expect(try await d.request(.anon, .get, fts(QueryLimits.textQueryDepth)).status == .ok)
        expectLimit(try await d.request(.anon, .get, fts(QueryLimits.textQueryDepth + 1)), naming: QueryLimits.textQueryDepth, "fts")

        func path(_ steps: Int) -> String { "features" + String(repeating: "->a", count: steps - 1) + "->>b" }
        let atPath = try await d.request(.anon, .get, "/rest/v1/places?select=id,\(path(QueryLimits.jsonPathSteps))&\(path(QueryLimits.jsonPathSteps))=is.null")
        #expect(atPath.status == .ok, "\(atPath.text.prefix(300))")
        expectLimit(try await d.request(.anon, .get, "/rest/v1/places?select=id,\(path(QueryLimits.jsonPathSteps + 1))"), naming: QueryLimits.jsonPathSteps, "path")

        let order = Array(repeating: "name_en.desc.nullslast", count: QueryLimits.orderTerms)
        #expect(try await d.request(.anon, .get, "/rest/v1/places?select=id&order=\(order.joined(separator: ","))").status == .ok)
        expectLimit(try await d.request(.anon, .get, "/rest/v1/places?select=id&order=\((order + ["id"]).joined(separator: ","))"),
                    naming: QueryLimits.orderTerms, "order")

        let list = (0..<QueryLimits.listItems).map(String.init)
        let atList = try await d.request(.anon, .get, "/rest/v1/places?select=id&rating_count=in.(\(list.joined(separator: ",")))")
        #expect(atList.status == .ok, "\(atList.text.prefix(300))")
        expectLimit(try await d.request(.anon, .get, "/rest/v1/places?select=id&rating_count=in.(\((list + ["1"]).joined(separator: ",")))"),
                    naming: QueryLimits.listItems, "list")

        let values = Array(repeating: "id", count: QueryLimits.embeddedValues)
        let atValues = try await d.request(.anon, .get, "/rest/v1/reviews?select=id,places(\(values.joined(separator: ",")))")
        #expect(atValues.status == .ok, "\(atValues.text.prefix(300))")
        expectLimit(try await d.request(.anon, .get, "/rest/v1/reviews?select=id,places(\((values + ["id"]).joined(separator: ",")))"),
                    naming: QueryLimits.embeddedValues, "embedded values")
        let selected = Array(repeating: "id", count: QueryLimits.selectedValues + 1).joined(separator: ",")
        expectLimit(try await d.request(.anon, .get, "/rest/v1/places?select=\(selected)"), naming: QueryLimits.selectedValues, "selected")
    }

    /// Conditions and embeds per request follow the server's settings (`query_max_filters`, `query_max_embeds`),
    /// logic-tree conditions and an `(any)` list's values included; the refusal names the setting.
    @Test(arguments: Engine.allCases)
    func conditionsAndEmbedsPerRequestFollowTheSettings(engine: Engine) async throws {
        var d = try await PolicyDeployment.make(engine: engine)
        let conditions = Array(repeating: "id=neq.x", count: QueryLimits().maxFilters).joined(separator: "&")
        #expect(try await d.request(.anon, .get, "/rest/v1/places?select=id&\(conditions)").status == .ok)
        expectLimit(try await d.request(.anon, .get, "/rest/v1/places?select=id&\(conditions)&id=neq.y"), naming: QueryLimits().maxFilters)

        d.deployment.configuration.queryLimits.maxFilters = 3
        d.deployment.configuration.queryLimits.maxEmbeds = 2
        #expect(try await d.request(.anon, .get, "/rest/v1/places?select=id&id=neq.a&or=(id.neq.b,id.neq.c)").status == .ok)
        for uri in ["/rest/v1/places?select=id&id=neq.a&or=(id.neq.b,id.neq.c,id.neq.d)", "/rest/v1/places?select=id&id=neq(any).{a,b,c,d}",
                    "/rest/v1/places?select=id,reviews(id)&reviews.rating=gt.1&reviews.or=(rating.gt.2,rating.gt.3,rating.gt.4)"] {
            let refused = try await d.request(.anon, .get, uri)
            expectLimit(refused, naming: 3, uri)
            #expect(refused.text.contains("query_max_filters"), "\(refused.text)")
        }
        #expect(try await d.request(.anon, .get, "/rest/v1/places?select=id,reviews(id,places(id))").status == .ok)
        let embeds = try await d.request(.anon, .get, "/rest/v1/places?select=id,reviews(id,places(id)),delivery_prices(app_name)")
        expectLimit(embeds, naming: 2)
        #expect(embeds.text.contains("query_max_embeds"))
    }

    /// A query string past `query_max_length` is 414 with a JSON body and a stable code, on every route.
    @Test func aQueryStringPastItsLengthIs414WithAJSONBody() async throws {
        var d = try await PolicyDeployment.make()
        d.deployment.configuration.queryLimits.maxQueryLength = 2048
        let fits = "select=id&name_en=neq." + String(repeating: "x", count: 2048 - 22)
        #expect(try await d.request(.anon, .get, "/rest/v1/places?\(fits)").status == .ok)
        for path in ["/rest/v1/places", "/rest/v1/rpc/count_places", "/sync/v1/pull", "/admin/api/changes"] {
            let response = try await d.request(.anon, .get, "\(path)?\(fits)x")
            #expect(response.status == .uriTooLong, "\(path)")
            #expect(response.errorCode == "CARAVAN_URI_TOO_LONG", "\(path): \(response.text)")
            #expect(response.json?["message"] == .string("The query string is longer than the limit of 2048 bytes"), "\(path)")
        }
        #expect(try await d.request(.anon, .get, "/health").status == .ok)
    }

    /// Each grammar at its limit on its own stays below what SQLite parses, but several at once can pass it (a
    /// logic tree at its limit inside the deepest embed): the engine's refusal is 400 PGRST100 too, never a 500.
    @Test(arguments: Engine.allCases)
    func limitsTogetherPastWhatTheEngineTakesAre400(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let depth = QueryLimits.embedDepth(on: .sqlite)
        let path = (1...depth).map { $0 % 2 == 1 ? "reviews" : "places" }.joined(separator: ".")
        let uri = "/rest/v1/places?select=\(Self.embeds(depth))&\(path).or=\(QueryFuzzer.encode(Self.logicTree(groups: QueryLimits.logicTreeDepth)))"
        let response = try await d.request(.anon, .get, uri)
        if engine == .sqlite {
            #expect(response.status == .badRequest && response.errorCode == "PGRST100", "\(response.text.prefix(300))")
        } else {
            #expect(response.status == .ok, "\(response.text.prefix(300))")
        }
    }

    /// A seeded fuzz over every grammar (filters, logic trees, select with embeds and spreads, JSON paths, casts,
    /// order, fts) on reads, HEAD, RPC results and writes: every request is answered below 500, and `/health` keeps
    /// answering.
    @Test(arguments: Engine.allCases)
    func randomDeepAndWideQueriesAreAlwaysAnswered(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        var fuzzer = QueryFuzzer(seed: 43, columns: ["id", "name_en", "name_ar", "category", "rating_count", "google_rating", "tags", "features",
                                                     "is_active", "rating", "place_id", "nope"],
                                 tables: ["reviews", "places", "favorites", "categories", "delivery_prices", "nowhere"])
        var statuses: [Int: Int] = [:]
        var errorCodes: [String: Int] = [:]
        for index in 0..<120 {
            let query = fuzzer.queryString()
            let (actor, method, uri): (Actor, HTTPRequest.Method, String) = switch index % 10 {
            case 7: (.anon, .head, "/rest/v1/places?\(query)")
            case 8: (.anon, .get, "/rest/v1/rpc/places_in_category?cat=cafe&\(query)")
            case 9: (.service, .patch, "/rest/v1/reviews?\(query)")
            default: (.anon, .get, "/rest/v1/\(fuzzer.pick(["places", "reviews", "places"]))?\(query)")
            }
            let body: String? = method == .patch ? #"{"rating":3}"# : nil
            let response = try await d.request(actor, method, uri, body: body)
            let code = response.status.code
            statuses[code, default: 0] += 1
            if code >= 400 { errorCodes[response.errorCode ?? "-", default: 0] += 1 }
            let shown = "case \(index): \(method) \(uri.prefix(400)) → \(code) \(response.text.prefix(300))"
            #expect(code < 500, Comment(rawValue: shown))
            if index % 20 == 19 {
                #expect(try await d.request(.anon, .get, "/health").status == .ok)
            }
        }
        let served = statuses.filter { $0.key < 300 }.values.reduce(0, +)
        let refused = statuses.filter { $0.key >= 400 }.values.reduce(0, +)
        #expect(served > 5, "some requests are served: \(statuses) \(errorCodes)")
        #expect(refused > 5, "some requests are refused: \(statuses)")
    }
}

@Suite("Query limit settings")
struct QueryLimitSettingsTests {
    /// `query_max_length`, `query_max_filters` and `query_max_embeds` follow flags > environment > file > defaults,
    /// within their ranges; the filters setting also bounds realtime binding filters.
    @Test func settingsResolveWithinTheirRanges() throws {
        let defaults = try ServerConfiguration.resolve(flags: [:], environment: [:], file: [:])
        #expect(defaults.queryLimits == QueryLimits(maxQueryLength: 32_768, maxFilters: 256, maxEmbeds: 32))
        let set = try ServerConfiguration.resolve(flags: ["query_max_filters": "40"], environment: ["CARAVAN_QUERY_MAX_LENGTH": "4096", "CARAVAN_QUERY_MAX_FILTERS": "50"],
                                                  file: ["query_max_embeds": "8"])
        #expect(set.queryLimits == QueryLimits(maxQueryLength: 4096, maxFilters: 40, maxEmbeds: 8))
        #expect(set.realtime.filters.maxFilters == 40)
        for (key, value) in [("query_max_length", "100"), ("query_max_length", "2000000"), ("query_max_filters", "0"), ("query_max_filters", "513"),
                             ("query_max_embeds", "many"), ("query_max_embeds", "257")] {
            #expect(throws: CaravanError.self, "\(key)=\(value)") { try ServerConfiguration.resolve(flags: [key: value], environment: [:], file: [:]) }
        }
    }
}

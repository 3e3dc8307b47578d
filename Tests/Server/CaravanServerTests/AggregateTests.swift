import CaravanCore
import CaravanTesting
import CaravanServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// PostgREST 12 aggregates in `select=` through the real router on both engines: off by default
/// (PGRST123); on, every result is checked against the same caller's plain read, computed here in Swift.
@Suite("Aggregates")
struct AggregateTests {
    private func deployment(_ engine: Engine, enabled: Bool = true) async throws -> PolicyDeployment {
        var d = try await PolicyDeployment.make(engine: engine)
        d.deployment.configuration.aggregatesEnabled = enabled
        return d
    }

    private func rows(_ response: TestResponse) -> [JSONValue] {
        guard case .array(let rows)? = response.json else { Issue.record(Comment(rawValue: "\(response.status) \(response.text)")); return [] }
        return rows
    }

    private func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .integer(let i)?: Double(i)
        case .double(let d)?: d
        default: nil
        }
    }

    @Test(arguments: Engine.allCases)
    func aggregatesAreRefusedUntilTurnedOn(engine: Engine) async throws {
        let d = try await deployment(engine, enabled: false)
        for path in ["/rest/v1/places?select=count()", "/rest/v1/places?select=category,google_rating.sum()", "/rest/v1/places?select=id,reviews(rating.avg())"] {
            let response = try await d.request(.anon, .get, path)
            #expect(response.status == .badRequest, "\(path)")
            #expect(response.json == JSONValue.object([("code", .string("PGRST123")), ("details", .null), ("hint", .null),
                                                      ("message", .string("Use of aggregate functions is not allowed"))]), "\(path)")
        }
        let embeddedCount = try await d.request(.anon, .get, "/rest/v1/places?select=id,reviews(count)&id=eq.cafe-nour")
        #expect(embeddedCount.status == .ok, "the embedded count of old stays available")
    }

    /// Grouped by category: count, sums, averages, minimum and maximum agree with a plain read of the same rows.
    @Test(arguments: Engine.allCases)
    func groupedAggregatesAgreeWithAPlainRead(engine: Engine) async throws {
        let d = try await deployment(engine)
        let plain = rows(try await d.request(.anon, .get, "/rest/v1/places?select=category,google_rating,rating_count"))
        let groups = Dictionary(grouping: plain) { row -> String in if case .string(let c)? = row["category"] { c } else { "" } }
        let grouped = rows(try await d.request(.anon, .get,
            "/rest/v1/places?select=category,count(),google_rating.sum(),google_rating.avg(),google_rating.min(),google_rating.max(),ratings:rating_count.sum()"))
        #expect(grouped.map { $0["category"] } == groups.keys.sorted().map(JSONValue.string), "one row per group, in the group's order")
        for row in grouped {
            guard case .string(let category)? = row["category"], let members = groups[category] else { Issue.record("unknown group \(row)"); continue }
            let ratings = members.compactMap { number($0["google_rating"]) }
            #expect(row["count"] == .integer(Int64(members.count)))
            #expect(row["ratings"] == .integer(members.compactMap { number($0["rating_count"]) }.reduce(0) { $0 + Int64($1) }), "sum of integers is an integer")
            if ratings.isEmpty {
                #expect(row["sum"] == .null && row["avg"] == .null && row["min"] == .null && row["max"] == .null)
            } else {
                #expect(abs((number(row["sum"]) ?? .nan) - ratings.reduce(0, +)) < 1e-9)
                #expect(abs((number(row["avg"]) ?? .nan) - ratings.reduce(0, +) / Double(ratings.count)) < 1e-9)
                #expect(number(row["min"]) == ratings.min() && number(row["max"]) == ratings.max())
            }
        }
        let desc = rows(try await d.request(.anon, .get, "/rest/v1/places?select=category,count()&order=category.desc"))
        #expect(desc.map { $0["category"] } == groups.keys.sorted().reversed().map(JSONValue.string))
    }

    /// Filters apply before aggregating; aliases and casts on the result; the count of a grouped read counts groups.
    @Test(arguments: Engine.allCases)
    func filtersAliasesCastsAndCounts(engine: Engine) async throws {
        let d = try await deployment(engine)
        let cafes = rows(try await d.request(.anon, .get, "/rest/v1/places?select=id&category=eq.كافيه".addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!))
        let counted = rows(try await d.request(.anon, .get, "/rest/v1/places?select=n:count()::text&category=eq.كافيه".addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!))
        #expect(counted == [JSONValue.object([("n", .string(String(cafes.count)))])])
        let all = rows(try await d.request(.anon, .get, "/rest/v1/places?select=category"))
        let response = try await d.request(.anon, .get, "/rest/v1/places?select=category,count()&limit=1", prefer: "count=exact")
        #expect(response.header("Content-Range") == "0-0/\(Set(all.map { $0["category"] }).count)")
        let cast = rows(try await d.request(.anon, .get, "/rest/v1/reviews?select=total:rating::float8.sum(),rating.avg()::int"))
        #expect(number(cast.first?["total"]) == 4 && cast.first?["avg"] == .integer(4), "\(cast)")
    }

    /// `*` beside an aggregate groups by every column (JSON, arrays and timestamps included): one group per row here.
    @Test(arguments: Engine.allCases)
    func aStarGroupsByEveryColumn(engine: Engine) async throws {
        let d = try await deployment(engine)
        let plain = rows(try await d.request(.anon, .get, "/rest/v1/places"))
        let grouped = rows(try await d.request(.anon, .get, "/rest/v1/places?select=*,n:count()"))
        #expect(grouped.count == plain.count && grouped.allSatisfy { $0["n"] == .integer(1) })
        let stripped = grouped.map { row -> JSONValue in
            guard case .object(let pairs) = row else { return row }
            return .object(pairs.filter { $0.0 != "n" })
        }
        #expect(stripped == plain, "the same rows, in key order")

        let paths = rows(try await d.request(.anon, .get, "/rest/v1/places?select=w:features->>wifi")).map { $0["w"] ?? .null }
        let byPath = rows(try await d.request(.anon, .get, "/rest/v1/places?select=w:features->>wifi,count()"))
        #expect(byPath.count == Set(paths.map { "\($0)" }).count)
        for row in byPath {
            #expect(row["count"] == .integer(Int64(paths.filter { $0 == row["w"] }.count)), "a JSON path groups too: \(row)")
        }
    }

    /// Aggregates see only the rows the caller's select policy lets through: a hidden row changes no count or sum.
    @Test(arguments: Engine.allCases)
    func aHiddenRowChangesNoAggregate(engine: Engine) async throws {
        let d = try await deployment(engine)
        for actor in [Actor.anon, .userA, .userB, .service] {
            let visible = rows(try await d.request(actor, .get, "/rest/v1/places?select=id,rating_count"))
            let aggregate = rows(try await d.request(actor, .get, "/rest/v1/places?select=count(),rating_count.sum()"))
            let sum = visible.compactMap { number($0["rating_count"]) }.reduce(0) { $0 + Int64($1) }
            #expect(aggregate == [JSONValue.object([("count", .integer(Int64(visible.count))), ("sum", .integer(sum))])], "\(actor)")
            let favorites = rows(try await d.request(actor, .get, "/rest/v1/favorites?select=id"))
            #expect(rows(try await d.request(actor, .get, "/rest/v1/favorites?select=count()")) == [JSONValue.object([("count", .integer(Int64(favorites.count)))])])
        }
        let anonymous = rows(try await d.request(.anon, .get, "/rest/v1/places?select=count()"))
        let service = rows(try await d.request(.service, .get, "/rest/v1/places?select=count()"))
        #expect(number(service.first?["count"]) == number(anonymous.first?["count"]).map { $0 + 1 }, "the inactive place counts for the service role only")
    }

    /// Inside a to-many embed the aggregates are grouped per parent row: one object, nulls and a zero for none.
    @Test(arguments: Engine.allCases)
    func aggregatesInsideAnEmbedArePerParent(engine: Engine) async throws {
        let d = try await deployment(engine)
        _ = try await d.request(.service, .post, "/rest/v1/reviews", body: #"{"user_id":"\#(PolicyDeployment.userB)","place_id":"cafe-nour","rating":5}"#)
        let places = rows(try await d.request(.anon, .get, "/rest/v1/places?select=id,reviews(rating.avg(),n:count(),rating.max())&id=in.(cafe-nour,kudu)&order=id"))
        #expect(places == [
            JSONValue.object([("id", .string("cafe-nour")), ("reviews", .array([.object([("avg", .double(4.5)), ("n", .integer(2)), ("max", .integer(5))])]))]),
            JSONValue.object([("id", .string("kudu")), ("reviews", .array([.object([("avg", .null), ("n", .integer(0)), ("max", .null)])]))]),
        ])
        let grouped = rows(try await d.request(.anon, .get, "/rest/v1/places?select=id,reviews(rating,count())&id=eq.cafe-nour"))
        #expect(grouped.first?["reviews"] == .array([.object([("rating", .integer(4)), ("count", .integer(1))]), .object([("rating", .integer(5)), ("count", .integer(1))])]))
        let cast = rows(try await d.request(.anon, .get, "/rest/v1/places?select=id,reviews(rating::float8.sum())&id=eq.cafe-nour"))
        if case .array(let sums)? = cast.first?["reviews"] { #expect(number(sums.first?["sum"]) == 9, "\(cast)") } else { Issue.record("\(cast)") }
        let topLevel = rows(try await d.request(.anon, .get, "/rest/v1/reviews?select=place_id,count(),places(name_en)"))
        #expect(topLevel == [JSONValue.object([("place_id", .string("cafe-nour")), ("count", .integer(2)), ("places", .object([("name_en", .string("Café Nour"))]))])])
    }

    /// Wrong aggregates answer as PostgreSQL and PostgREST would: unknown column 42703, a function that does not
    /// apply 42883, a column neither grouped nor aggregated in order 42803.
    @Test(arguments: Engine.allCases)
    func wrongAggregatesAnswerWithPostgRESTCodes(engine: Engine) async throws {
        let d = try await deployment(engine)
        let cases: [(String, HTTPResponse.Status, String)] = [
            ("/rest/v1/places?select=nope.sum()", .badRequest, "42703"),
            ("/rest/v1/places?select=category.sum()", .notFound, "42883"),
            ("/rest/v1/places?select=category,count()&order=name_en", .badRequest, "42803"),
            ("/rest/v1/places?select=rating_count.sum()::decimal128", .badRequest, "PGRST100"),
        ]
        for (path, status, code) in cases {
            let response = try await d.request(.anon, .get, path)
            #expect(response.status == status, "\(path): \(response.text)")
            #expect(response.json?["code"] == .string(code), "\(path): \(response.text)")
        }
    }
}

import CaravanCore
import CaravanTesting
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// PostgREST JSON paths (`data->key`, `data->>key`, `data->0`, nested, with casts) in select, filters and order,
/// answered alike by both engines.
@Suite("JSON paths")
struct JSONPathTests {
    static let features = #"{"wifi": true, "seats": 40, "note": null, "menu": {"lang": "ar", "items": ["قهوة", "tea"]}}"#

    private func rows(_ response: TestResponse) -> [JSONValue] {
        guard case .array(let rows)? = response.json else { Issue.record(Comment(rawValue: "\(response.status) \(response.text)")); return [] }
        return rows
    }

    private func deployment(_ engine: Engine) async throws -> PolicyDeployment {
        let d = try await PolicyDeployment.make(engine: engine)
        let patched = try await d.request(.admin, .patch, "/rest/v1/places?id=eq.kudu", body: #"{"features": \#(Self.features)}"#)
        #expect(patched.status == .ok, "\(patched.text)")
        let other = try await d.request(.admin, .patch, "/rest/v1/places?id=eq.cafe-nour", body: #"{"features": {"wifi": false, "seats": 12}}"#)
        #expect(other.status == .ok, "\(other.text)")
        return d
    }

    @Test(arguments: Engine.allCases)
    func pathsSelectJSONOrTextNamedByTheirLastKey(engine: Engine) async throws {
        let d = try await deployment(engine)
        let picked = rows(try await d.request(.anon, .get,
            "/rest/v1/places?select=id,features->menu->>lang,seats:features->seats,first:features->menu->items->0,features->menu,features->>wifi,features->>note,features->>missing,count:features->>seats::int&id=eq.kudu"))
        #expect(picked == [JSONValue.object([
            ("id", .string("kudu")), ("lang", .string("ar")), ("seats", .integer(40)), ("first", .string("قهوة")),
            ("menu", .object([("lang", .string("ar")), ("items", .array([.string("قهوة"), .string("tea")]))])),
            ("wifi", .string("true")), ("note", .null), ("missing", .null), ("count", .integer(40)),
        ])])
    }

    /// Inside an embed, a JSON path reads as the same path read from the embedded table itself; a cast there is
    /// refused (PGRST200), not ignored.
    @Test(arguments: Engine.allCases)
    func pathsInsideAnEmbedReadAsTheirTableReadsThem(engine: Engine) async throws {
        let d = try await deployment(engine)
        let select = "features->menu->>lang,seats:features->seats,features->menu,features->>wifi"
        let direct = rows(try await d.request(.anon, .get, "/rest/v1/places?select=\(select)&id=eq.cafe-nour"))
        let embedded = rows(try await d.request(.anon, .get, "/rest/v1/reviews?select=rating,places(\(select))&place_id=eq.cafe-nour"))
        #expect(!embedded.isEmpty && direct.count == 1)
        #expect(embedded.allSatisfy { $0["places"] == direct.first }, "\(embedded) vs \(direct)")
        let cast = try await d.request(.anon, .get, "/rest/v1/reviews?select=rating,places(seats:features->>seats::int)")
        #expect(cast.status == .badRequest && cast.errorCode == "PGRST200", "\(cast.text)")
    }

    @Test(arguments: Engine.allCases)
    func pathsFilterAndOrder(engine: Engine) async throws {
        let d = try await deployment(engine)
        let withWifi = rows(try await d.request(.anon, .get, "/rest/v1/places?select=id&features->>wifi=eq.true"))
        #expect(withWifi == [JSONValue.object([("id", .string("kudu"))])])
        let arabic = rows(try await d.request(.anon, .get, "/rest/v1/places?select=id&features->menu->>lang=in.(ar,en)"))
        #expect(arabic == [JSONValue.object([("id", .string("kudu"))])])
        let noMenu = rows(try await d.request(.anon, .get, "/rest/v1/places?select=id&features->menu=is.null&features=not.is.null"))
        #expect(noMenu == [JSONValue.object([("id", .string("cafe-nour"))])])
        let ordered = rows(try await d.request(.anon, .get, "/rest/v1/places?select=id&features=not.is.null&order=features->>wifi.desc"))
        #expect(ordered.map { $0["id"] } == [JSONValue.string("kudu"), JSONValue.string("cafe-nour")])
    }

    @Test func badPathsAreRefusedWithTheirReason() async throws {
        let d = try await PolicyDeployment.make()
        let notJSON = try await d.request(.anon, .get, "/rest/v1/places?select=name_en->x")
        #expect(notJSON.status == .badRequest && notJSON.errorCode == "PGRST127", "\(notJSON.text)")
        let badKey = try await d.request(.anon, .get, "/rest/v1/places?select=features->'x'")
        #expect(badKey.status == .badRequest && badKey.errorCode == "PGRST100", "\(badKey.text)")
        let textThenMore = try await d.request(.anon, .get, "/rest/v1/places?select=features->>a->b")
        #expect(textThenMore.errorCode == "PGRST100")
        let unknown = try await d.request(.anon, .get, "/rest/v1/places?select=nope->a")
        #expect(unknown.errorCode == "42703")
    }
}

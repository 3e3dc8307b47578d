import CaravanCore
@testable import CaravanServer
import CaravanTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// PostgREST 13's `Prefer: handling=strict, max-affected=n` (what supabase-swift's and supabase-py's `maxAffected`
/// send) and the `nulls=stripped` media types, on both engines.
@Suite("PostgREST 13 preferences and media types")
struct PostgREST13PreferenceTests {
    static let strict = "handling=strict, max-affected="

    @Test(arguments: Engine.allCases)
    func anUpdatePastMaxAffectedIsRefusedAndRolledBack(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let three = "/rest/v1/places?id=in.(kudu,bloom,orchard)"
        let refused = try await d.request(.service, .patch, three, body: #"{"name_en":"Renamed"}"#, prefer: Self.strict + "2")
        #expect(refused.status == .badRequest)
        #expect(refused.errorCode == "PGRST124")
        #expect(refused.json?["message"] == .string("Query result exceeds max-affected preference constraint"))
        #expect(refused.json?["details"] == .string("The query affects 3 rows"))
        let afterRefusal = try await d.request(.service, .get, "/rest/v1/places?select=id&name_en=eq.Renamed", prefer: nil)
        #expect(afterRefusal.ids == [], "the refused update was rolled back")

        let allowed = try await d.request(.service, .patch, three, body: #"{"name_en":"Renamed"}"#, prefer: Self.strict + "3")
        #expect(allowed.status == .noContent)
        let renamed = try await d.request(.service, .get, "/rest/v1/places?select=id&name_en=eq.Renamed&order=id", prefer: nil)
        #expect(renamed.ids == ["bloom", "kudu", "orchard"])
    }

    @Test(arguments: Engine.allCases)
    func lenientHandlingIgnoresMaxAffected(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let response = try await d.request(.service, .patch, "/rest/v1/places?id=in.(kudu,bloom)", body: #"{"name_en":"Lenient"}"#,
                                           prefer: "max-affected=1")
        #expect(response.status == .noContent)
        #expect(try await d.request(.service, .get, "/rest/v1/places?select=id&name_en=eq.Lenient", prefer: nil).ids.count == 2)
    }

    @Test(arguments: Engine.allCases)
    func aDeletePastMaxAffectedKeepsItsRows(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let fresh = #"[{"id":"x1","name_ar":"x","category":"c","category_ar":"c"},{"id":"x2","name_ar":"y","category":"c","category_ar":"c"}]"#
        #expect(try await d.request(.service, .post, "/rest/v1/places", body: fresh, prefer: nil).status == .created)
        let refused = try await d.request(.service, .delete, "/rest/v1/places?id=in.(x1,x2)", prefer: Self.strict + "1")
        #expect(refused.errorCode == "PGRST124")
        #expect(refused.json?["details"] == .string("The query affects 2 rows"))
        #expect(try await d.allIDs("places").contains("x1"))
        // With a representation, too: the embedding delete path checks the same bound.
        let represented = try await d.request(.service, .delete, "/rest/v1/places?id=in.(x1,x2)&select=id",
                                              prefer: "return=representation, " + Self.strict + "1")
        #expect(represented.errorCode == "PGRST124")
        let allowed = try await d.request(.service, .delete, "/rest/v1/places?id=in.(x1,x2)", prefer: Self.strict + "2")
        #expect(allowed.status == .noContent)
        #expect(!(try await d.allIDs("places").contains("x1")))
    }

    @Test(arguments: Engine.allCases)
    func functionsCountTheirRowsAndScalarOnesAreRefused(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let body = #"{"cat":"cafe"}"#
        let all = try await d.request(.anon, .post, "/rest/v1/rpc/places_in_category?select=id", body: body, prefer: nil)
        let count = all.ids.count
        #expect(count >= 2)
        let refused = try await d.request(.anon, .post, "/rest/v1/rpc/places_in_category?select=id", body: body, prefer: Self.strict + String(count - 1))
        #expect(refused.errorCode == "PGRST124")
        #expect(refused.json?["details"] == .string("The query affects \(count) rows"))
        let allowed = try await d.request(.anon, .post, "/rest/v1/rpc/places_in_category?select=id", body: body, prefer: Self.strict + String(count))
        #expect(allowed.ids.count == count)
        let scalar = try await d.request(.anon, .post, "/rest/v1/rpc/count_places", body: "{}", prefer: Self.strict + "10")
        #expect(scalar.status == .badRequest)
        #expect(scalar.errorCode == "PGRST128")
    }

    @Test func aMaxAffectedThatIsNoCountIsAnInvalidPreferenceUnderStrictHandling() async throws {
        let d = try await PolicyDeployment.make()
        let response = try await d.request(.service, .patch, "/rest/v1/places?id=eq.kudu", body: #"{"name_en":"K"}"#, prefer: Self.strict + "many")
        #expect(response.errorCode == "PGRST122")
        #expect(response.json?["details"] == .string("Invalid preferences: max-affected=many"))
    }

    @Test(arguments: Engine.allCases)
    func strippedNullsLeaveNullMembersOutAndSayTheyDid(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let uri = "/rest/v1/places?select=id,name_en&id=eq.no-english"
        let plain = try await d.request(.anon, .get, uri, prefer: nil)
        #expect(plain.text == #"[{"id":"no-english","name_en":null}]"#)
        let array = try await d.request(.anon, .get, uri, prefer: nil, headers: [.accept: "application/vnd.pgrst.array+json;nulls=stripped"])
        #expect(array.text == #"[{"id":"no-english"}]"#)
        #expect(array.header("Content-Type") == "application/vnd.pgrst.array+json;nulls=stripped; charset=utf-8")
        let object = try await d.request(.anon, .get, uri, prefer: nil, headers: [.accept: "application/vnd.pgrst.object+json;nulls=stripped"])
        #expect(object.text == #"{"id":"no-english"}"#)
        #expect(object.header("Content-Type") == "application/vnd.pgrst.object+json;nulls=stripped; charset=utf-8")
        // Without the parameter the vendor type keeps its nulls.
        let vendor = try await d.request(.anon, .get, uri, prefer: nil, headers: [.accept: "application/vnd.pgrst.object+json"])
        #expect(vendor.text == #"{"id":"no-english","name_en":null}"#)
    }

    @Test func strippingIsRecursiveOverObjectsAndKeepsNullsInArrays() throws {
        let input = try JSONParser.parse(#"{"a":null,"b":{"c":null,"d":[null,{"e":null,"f":1}]},"g":"x"}"#)
        #expect(ReadMediaType.strippingNulls(input).jsonText == #"{"b":{"d":[null,{"f":1}]},"g":"x"}"#)
    }
}

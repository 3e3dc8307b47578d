import CaravanCore
import CaravanTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The `fts`, `plfts`, `phfts` and `wfts` operators and the search RPCs through the real router (TestDeployment's
/// five places).
@Suite("Full-text operators and search RPCs over REST")
struct TextSearchRouterTests {
    @Test(arguments: Engine.allCases, [
        ("name_en=fts.cafe", ["bloom", "cafe-nour"]),
        ("name_en=fts(english).cafes", ["bloom", "cafe-nour"]),           // stemmed through the index
        ("name_en=plfts.CAFÉ%20nour", ["cafe-nour"]),
        ("name_en=phfts.nour%20cafe", []),
        ("name_en=phfts.cafe%20nour", ["cafe-nour"]),
        ("name_en=wfts.kudu%20or%20orchard", ["kudu", "orchard"]),
        ("name_en=wfts(english).cafe%20-bloom", ["cafe-nour"]),
        ("name_en=fts.kudu%20|%20bloom:*", ["bloom", "kudu"]),
        ("name_en=fts.!cafe", ["kudu", "orchard"]),                          // a lone negation; NULL name_en is not a match
        ("name_en=not.fts.cafe", ["kudu", "orchard"]),
        ("name_en=wfts.ORCHARD", ["orchard"]),
        ("name_en=fts.or", []),
        ("name_ar=fts.مقهي", ["cafe-nour"]),                                // ى typed as ي
        ("phone=fts.966500000001", ["cafe-nour"]),                           // a column outside the index: folded tokens
        ("phone=not.fts.966500000001", []),                                  // (NULL phones are unknown, left out)
        ("or=(name_en.fts.kudu,name_ar.plfts.بلوم)", ["bloom", "kudu"]),
        ("name_en=plfts.%22%2A%20NEAR(", []),                               // hostile text: tokens only
        ("name_en=wfts.%22%2A%20NEAR(%20-%22", []),
    ] as [(String, [String])])
    func operators(engine: Engine, _ example: (String, [String])) async throws {
        let (filter, expected) = example
        let deployment = try await TestDeployment.make(engine: engine)
        let response = try await deployment.get("/rest/v1/places?select=id&order=id&\(filter)")
        #expect(response.status == .ok, "\(filter): \(response.text)")
        #expect(response.ids == expected, "\(filter)")
    }

    @Test(arguments: Engine.allCases, [
        ("name_en=fts.a%20%26", "42601"), ("name_en=fts.%22%2A%20NEAR(", "42601"), ("name_en=fts.coffee%20hill", "42601"), ("name_en=fts(klingon).x", "42704"),
        ("google_rating=fts.x", "PGRST127"), ("tags=fts.cafe", "PGRST127"),
    ] as [(String, String)])
    func errors(engine: Engine, _ example: (String, String)) async throws {
        let (filter, code) = example
        let deployment = try await TestDeployment.make(engine: engine)
        let response = try await deployment.get("/rest/v1/places?\(filter)")
        #expect(response.status == .badRequest)
        #expect(response.errorCode == code, "\(filter): \(response.text)")
    }

    @Test(arguments: Engine.allCases)
    func searchAndNearbyRPCs(engine: Engine) async throws {
        let deployment = try await TestDeployment.make(engine: engine)
        let typeAhead = try await deployment.get("/rest/v1/rpc/search_places?query=caf")
        #expect(typeAhead.status == .ok)
        // Names, categories and tags are searched: ORCHARD is in category "cafe". Names weigh more than categories.
        #expect(Set(typeAhead.ids) == ["bloom", "cafe-nour", "orchard"])
        #expect(typeAhead.ids.last == "orchard")
        let arabic = try await deployment.get("/rest/v1/rpc/search_places?query=%D9%85%D9%82%D9%87%D9%8A")  // مقهي
        #expect(arabic.ids == ["cafe-nour"])
        let filtered = try await deployment.get("/rest/v1/rpc/search_places?query=caf&cat=restaurant")
        #expect(filtered.ids == [])
        let near = try await deployment.get("/rest/v1/rpc/nearby_places?lat=24.7&lng=46.7001&radius_m=1000")
        #expect(near.ids == ["cafe-nour"])
        if case .array(let rows)? = near.json, case .double(let meters)? = rows.first?["distance_meters"] {
            #expect(abs(meters - 10.1) < 0.1)
        } else {
            Issue.record("no distance_meters: \(near.text)")
        }
        let bad = try await deployment.get("/rest/v1/rpc/nearby_places?lat=95&lng=46.7")
        #expect(bad.status == .badRequest)
        #expect(bad.errorCode == "22023")
    }
}

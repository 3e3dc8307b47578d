import CaravanCore
import CaravanTesting
import Foundation
import Testing
import TravelLog

@Suite("TravelLog user functions and policies on both engines")
struct TravelLogFunctionsTests {
    static func call(_ function: String, _ arguments: [String: JSONValue], as identity: Identity, store: any Store) async throws -> RPCResult {
        try await store.transaction(travelCatalog.access(for: identity), rollback: false, grant: TransactionGrant()) { tx in
            try await callTravel(function, arguments, in: tx)
        }.0
    }

    static func places(_ json: String) throws -> JSONValue { try JSONParser.parse(json) }

    @Test(arguments: Engine.allCases)
    func addUserCityIsAtomicWithItsPlaces(engine: Engine) async throws {
        let store = try await RemoveUserCityTests.seeded(engine)
        let added = try await Self.call("add_user_city", [
            "city_id": .integer(17), "visited": .bool(true), "rating": .double(7.3), "notes": .string("dunes"),
            "places": try Self.places(#"[{"name":"Hotel Heinitzburg","latitude":-22.57,"longitude":17.09,"category":"hotel","liked":true},{"name":"Craft Centre","latitude":-22.56,"longitude":17.08,"category":"shop"}]"#),
        ], as: TravelUsers.identityA, store: store)
        guard case .rows(let table, _) = added else { Issue.record("add_user_city returns the row"); return }
        #expect(table.name == "user_city")
        let row = try await inRolledBack(store) { tx in
            try await travelRows(TravelLogSchema.userCity, in: tx).first { $0["user_id"] == .text(TravelUsers.a) && $0["city_id"] == .integer(17) }
        }
        // 7.3 is stored and read back as 7.3 on both engines (float8, not float4).
        #expect(row?["rating"] == .double(7.3) && row?["notes"] == .text("dunes") && row?["visited"] == .bool(true))
        let grouped = jsonResult(try await Self.call("user_city_places", ["city_id": .integer(17)], as: TravelUsers.identityA, store: store))
        #expect(grouped["hotel"].map { if case .array(let items) = $0 { items.count } else { -1 } } == 1)
        #expect(grouped["shop"]?.jsonText.contains("Craft Centre") == true)
        #expect(grouped["restaurant"] == .array([]) && grouped["activity"] == .array([]))
        // A bad place (category) rolls the whole call back: no city row either.
        let error = await #expect(throws: CaravanError.self) {
            try await Self.call("add_user_city", ["city_id": .integer(12), "places": try Self.places(#"[{"name":"X","latitude":0,"longitude":0,"category":"bar"}]"#)],
                                as: TravelUsers.identityB, store: store)
        }
        #expect(error?.code == .checkViolation)
        let unknownField = await #expect(throws: CaravanError.self) {
            try await Self.call("add_user_city", ["city_id": .integer(12), "places": try Self.places(#"[{"name":"X","user_id":"\#(TravelUsers.a)"}]"#)],
                                as: TravelUsers.identityB, store: store)
        }
        #expect(unknownField?.code == .invalidParameterValue && unknownField?.message.contains("places[0].user_id") == true)
        let bCities = try await inRolledBack(store) { tx in try await travelRows(TravelLogSchema.userCity, in: tx).filter { $0["user_id"] == .text(TravelUsers.b) } }
        #expect(bCities.count == 1)
        // A bucket-list row has no rating (23514); ratings stay within 0–10.
        for arguments: [String: JSONValue] in [["city_id": .integer(13), "visited": .bool(false), "rating": .double(5)],
                                                ["city_id": .integer(13), "visited": .bool(true), "rating": .double(10.5)]] {
            let refused = await #expect(throws: CaravanError.self) { try await Self.call("add_user_city", arguments, as: TravelUsers.identityB, store: store) }
            #expect(refused?.code == .checkViolation)
        }
    }

    @Test(arguments: Engine.allCases)
    func markCityVisitedUpsertsAndUserCitiesCarryTheCity(engine: Engine) async throws {
        let store = try await RemoveUserCityTests.seeded(engine)
        _ = try await Self.call("mark_city_visited", ["city_id": .integer(16), "rating": .double(8)], as: TravelUsers.identityA, store: store)
        _ = try await Self.call("mark_city_visited", ["city_id": .integer(17)], as: TravelUsers.identityA, store: store)
        let ratings = try await RemoveUserCityTests.ratings(store, user: TravelUsers.a)
        #expect(ratings[16] == .double(8) && ratings[17] == .null && ratings.count == 7)
        let visited = jsonResult(try await Self.call("user_cities", ["visited": .bool(true)], as: TravelUsers.identityA, store: store))
        guard case .array(let items) = visited else { Issue.record("user_cities returns an array"); return }
        #expect(items.count == 7)
        #expect(items.allSatisfy { $0["visited"] == .bool(true) && $0["user_id"] == .string(TravelUsers.a) })
        #expect(items.contains { $0["city_id"] == .integer(16) && $0["city"]?["display_name"] == .string("City 16") })
        let bucket = jsonResult(try await Self.call("user_cities", ["visited": .bool(false)], as: TravelUsers.identityA, store: store))
        #expect(bucket == .array([]))
        let others = jsonResult(try await Self.call("user_cities", [:], as: TravelUsers.identityB, store: store))
        #expect(others.jsonText.contains(TravelUsers.a) == false)
    }

    /// Who may do what on every table: anon, user A, user B and the service role × select, insert, update, delete.
    @Test(arguments: Engine.allCases)
    func policyMatrix(engine: Engine) async throws {
        let store = try await RemoveUserCityTests.seeded(engine)
        let actors: [(String, Identity)] = [("anon", Identity(role: .anon)), ("A", TravelUsers.identityA), ("B", TravelUsers.identityB), ("service", .serviceRole)]
        var observed: [String] = []
        for (name, identity) in actors {
            for table in TravelLogSchema.tables where table.exposure == .rest {
                let verdicts = try await inRolledBack(store, as: identity) { tx in try await Self.verdicts(on: table, tx) }
                observed.append("\(name) \(table.name) \(verdicts)")
            }
        }
        // select: rows seen; insert: ok or the refusal's code; update and delete: rows touched.
        #expect(observed == [
            "anon countries 1 42501 0 0", "anon cities 7 42501 0 0", "anon user_city 0 42501 0 0", "anon user_place 0 42501 0 0",
            "A countries 1 42501 0 0", "A cities 7 42501 0 0", "A user_city 6 ok 1 1", "A user_place 1 ok 1 1",
            "B countries 1 42501 0 0", "B cities 7 42501 0 0", "B user_city 1 42501 0 0", "B user_place 0 42501 0 0",
            "service countries 1 ok 1 1", "service cities 7 ok 1 1", "service user_city 7 ok 1 1", "service user_place 1 ok 1 1",
        ])
    }

    /// "rows-seen insert-verdict rows-updated rows-deleted" for the caller of `tx`. The insert is a new row
    /// (of user A for the user tables); the update and delete target that new row for the reference tables (an
    /// existing country or city is referenced), and A's existing rows for the user tables.
    static func verdicts(on table: TableSchema, _ tx: any StoreTransaction) async throws -> String {
        let seen = try await tx.fetch(try ReadPlan(table: table, query: Query(), access: try tx.access.readRule(table), maxRows: nil, includeCount: false)).rows.count
        let a = Value.text(TravelUsers.a)
        let (row, target, change): (RowValues, RowValues, RowValues) = switch table.name {
        case "countries": (RowValues(["id": .integer(2), "name": .text("Botswana"), "country_code": .text("BW")]),
                           RowValues(["id": .integer(2)]), RowValues(["population": .integer(5)]))
        case "cities": (RowValues(["id": .integer(99), "display_name": .text("Gaborone"), "plain_name": .text("Gaborone"), "country_id": .integer(1),
                                   "latitude": .double(-24), "longitude": .double(25)]),
                        RowValues(["id": .integer(99)]), RowValues(["population": .integer(5)]))
        case "user_city": (RowValues(["user_id": a, "city_id": .integer(17)]), RowValues(["user_id": a, "city_id": .integer(16)]), RowValues(["notes": .text("n")]))
        default: (RowValues(["user_id": a, "city_id": .integer(11), "name": .text("Dunes"), "latitude": .double(0), "longitude": .double(0),
                             "category": .text("activity")]),
                  RowValues(["user_id": a, "city_id": .integer(14)]), RowValues(["liked": .bool(true)]))
        }
        var insert = "ok"
        do { _ = try await tx.insert([row], into: table, conflict: nil) } catch let error as CaravanError {
            insert = error.code == .permissionDenied ? "42501" : "\(error.code)"
        }
        let filter = BoundPredicate.and(try zip(target.columns, target.values).map { .compare(try table.requireColumn($0), .eq, $1) })
        let updated = try await tx.update(table, set: change, where: filter).updated
        let deleted = try await tx.delete(from: table, where: filter).deleted
        return "\(seen) \(insert) \(updated) \(deleted)"
    }

    /// `user_id` defaults to the caller; a place must belong to one of the caller's city rows (23503 otherwise).
    @Test(arguments: Engine.allCases)
    func userIDDefaultsToTheCallerAndPlacesNeedTheirCityRow(engine: Engine) async throws {
        let store = try await RemoveUserCityTests.seeded(engine)
        let stored = try await store.transaction(travelCatalog.access(for: TravelUsers.identityB), rollback: true, grant: TransactionGrant()) { tx in
            try await tx.insert([RowValues(["city_id": .integer(13)])], into: TravelLogSchema.userCity, conflict: nil).rows
        }.0
        #expect(stored.first?[TravelLogSchema.userCity.position(of: "user_id") ?? 0] == .text(TravelUsers.b))
        let orphan = await #expect(throws: CaravanError.self) {
            try await store.transaction(travelCatalog.access(for: TravelUsers.identityB), rollback: true, grant: TransactionGrant()) { tx in
                try await tx.insert([RowValues(["city_id": .integer(14), "name": .text("X"), "latitude": .double(0), "longitude": .double(0),
                                          "category": .text("shop")])], into: TravelLogSchema.userPlace, conflict: nil)
            }
        }
        #expect(orphan?.code == .foreignKeyViolation)
        let anonymous = await #expect(throws: CaravanError.self) {
            try await store.transaction(travelCatalog.access(for: Identity(role: .anon)), rollback: true, grant: TransactionGrant()) { tx in
                try await tx.insert([RowValues(["city_id": .integer(13)])], into: TravelLogSchema.userCity, conflict: nil)
            }
        }
        #expect(anonymous?.code == .permissionDenied)
    }
}

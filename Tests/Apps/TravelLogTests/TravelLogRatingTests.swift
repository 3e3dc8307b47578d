import CaravanCore
import CaravanTesting
import Foundation
import Testing
import TravelLog

/// The rating rule of `remove_user_city`, against an independent implementation: positions by counting how many
/// cities sort before each one (no sort), and the n ≥ 5 rescale written from its formula.
enum ReferenceRating {
    static func adjust(_ cities: [RatingAdjustment.RatedCity]) -> [Int64: Double] {
        let rated = cities.filter { $0.rating > 0 }
        let n = rated.count
        var result: [Int64: Double] = [:]
        if n == 1 {
            result[rated[0].cityID] = 10
        } else if n >= 2 && n <= 4 {
            for city in rated {
                let before = rated.filter { other in
                    if other.rating != city.rating { return other.rating < city.rating }
                    if other.createdAt != city.createdAt { return other.createdAt < city.createdAt }
                    return other.cityID < city.cityID
                }.count
                result[city.cityID] = 1 + 9 * Double(before) / Double(n - 1)
            }
        } else if n >= 5 {
            let m = rated.reduce(0.0) { max($0, $1.rating) }
            if m < 10 { for city in rated { result[city.cityID] = min(10, city.rating * 10 / m) } }
        }
        return result.filter { id, new in rated.first { $0.cityID == id }?.rating != new }
    }
}

@Suite struct RatingAdjustmentTests {
    @Test func matchesTheReferenceOverAThousandRandomLists() {
        var random = SplitMix64(state: 0x5AFA_2026)
        for _ in 0..<1000 {
            let count = Int.random(in: 0...9, using: &random)
            var cities: [RatingAdjustment.RatedCity] = []
            for index in 0..<count {
                // Ties on purpose: ratings from a small set (0 included), times from a few seconds.
                let rating = [0, 1, 2.5, 5, 7.3, 7.3, 9, 9.9, 10][Int.random(in: 0...8, using: &random)]
                let second = Int.random(in: 0...3, using: &random)
                cities.append(.init(cityID: Int64(100 + index * 7 % 13 + index * 13), rating: rating,
                                    createdAt: "2026-01-01T00:00:0\(second).000000Z"))
            }
            let actual = Dictionary(uniqueKeysWithValues: RatingAdjustment.adjust(cities).map { ($0.cityID, $0.new) })
            #expect(actual == ReferenceRating.adjust(cities), "\(cities)")
        }
    }

    @Test func theIssuesCasesByHand() {
        func city(_ id: Int64, _ rating: Double, _ second: Int = 0) -> RatingAdjustment.RatedCity {
            .init(cityID: id, rating: rating, createdAt: "2026-01-01T00:00:0\(second).000000Z")
        }
        #expect(RatingAdjustment.adjust([city(1, 4)]).map(\.new) == [10])
        // 2 ≤ n ≤ 4: 1, 4, 7, 10 by rating; a tie is broken by created_at, then city id.
        #expect(RatingAdjustment.adjust([city(1, 8), city(2, 3), city(3, 3, 1), city(4, 5)]).map { [Double($0.cityID), $0.new] }
                == [[1, 10], [2, 1], [3, 4], [4, 7]])
        // n ≥ 5 with a highest of 8: ×10/8; with a 10 left, nothing changes.
        #expect(RatingAdjustment.adjust([city(1, 8), city(2, 4), city(3, 2), city(4, 6), city(5, 1)]).map(\.new) == [10, 5, 2.5, 7.5, 1.25])
        #expect(RatingAdjustment.adjust([city(1, 10), city(2, 4), city(3, 2), city(4, 6), city(5, 1)]).isEmpty)
        #expect(RatingAdjustment.adjust([]).isEmpty)
    }
}

@Suite("remove_user_city on both engines")
struct RemoveUserCityTests {
    /// A fresh store with Namibia and five of its cities, users A and B, and A's list: four visited, rated cities
    /// (ratings 2, 5, 6, 9; created a second apart), one unrated visited city and one bucket-list city; B has one city.
    static func seeded(_ engine: Engine) async throws -> any Store {
        let store = try await engine.makeStore(migrations: travelCatalog.migrations)
        _ = try await store.transaction(travelCatalog.access(for: .serviceRole), rollback: false, grant: TransactionGrant()) { tx in
            try await TravelUsers.insert(in: tx)
            _ = try await tx.insert([RowValues(["id": .integer(1), "name": .text("Namibia"), "country_code": .text("NA")])], into: TravelLogSchema.countries, conflict: nil)
            _ = try await tx.insert((11...17).map { id in
                RowValues(["id": .integer(id), "display_name": .text("City \(id)"), "plain_name": .text("City \(id)"),
                           "country_id": .integer(1), "latitude": .double(-22), "longitude": .double(17)])
            }, into: TravelLogSchema.cities, conflict: nil)
            let mine: [(Int64, Bool, Value)] = [(11, true, .double(2)), (12, true, .double(5)), (13, true, .double(6)), (14, true, .double(9)),
                                                (15, true, .null), (16, false, .null)]
            _ = try await tx.insert(mine.enumerated().map { index, row in
                RowValues(["user_id": .text(TravelUsers.a), "city_id": .integer(row.0), "visited": .bool(row.1), "rating": row.2,
                           "created_at": .text("2026-01-01T00:00:0\(index).000000Z")])
            }, into: TravelLogSchema.userCity, conflict: nil)
            _ = try await tx.insert([RowValues(["user_id": .text(TravelUsers.b), "city_id": .integer(11), "visited": .bool(true), "rating": .double(3)])],
                              into: TravelLogSchema.userCity, conflict: nil)
            _ = try await tx.insert([RowValues(["user_id": .text(TravelUsers.a), "city_id": .integer(14), "name": .text("Joe's"), "latitude": .double(-22),
                                          "longitude": .double(17), "category": .text("restaurant")])], into: TravelLogSchema.userPlace, conflict: nil)
        }
        return store
    }

    static func ratings(_ store: any Store, user: String) async throws -> [Int64: Value] {
        try await inRolledBack(store) { tx in
            var result: [Int64: Value] = [:]
            for row in try await travelRows(TravelLogSchema.userCity, in: tx) where row["user_id"] == .text(user) {
                if case .integer(let id)? = row["city_id"] { result[id] = row["rating"] ?? .null }
            }
            return result
        }
    }

    static func remove(_ cityID: Int64, as identity: Identity, store: any Store) async throws -> JSONValue {
        try await store.transaction(travelCatalog.access(for: identity), rollback: false, grant: TransactionGrant()) { tx in
            await jsonResult(try callTravel("remove_user_city", ["city_id": .integer(cityID)], in: tx))
        }.0
    }

    @Test(arguments: Engine.allCases)
    func removingARatedCityRespreadsTheRest(engine: Engine) async throws {
        let store = try await Self.seeded(engine)
        // Removing 9 leaves 2, 5, 6 (n = 3): 1, 5.5, 10. The unrated and bucket-list rows, and user B, are untouched.
        let result = try await Self.remove(14, as: TravelUsers.identityA, store: store)
        #expect(result == (try JSONParser.parse(#"{"removed":14,"adjusted":[{"city_id":11,"old":2,"new":1},{"city_id":12,"old":5,"new":5.5},{"city_id":13,"old":6,"new":10}]}"#)))
        #expect(try await Self.ratings(store, user: TravelUsers.a) == [11: .double(1), 12: .double(5.5), 13: .double(10), 15: .null, 16: .null])
        #expect(try await Self.ratings(store, user: TravelUsers.b) == [11: .double(3)])
        // Its place went with it.
        let places = try await inRolledBack(store) { tx in try await travelRows(TravelLogSchema.userPlace, in: tx) }
        #expect(places.isEmpty)
    }

    @Test(arguments: Engine.allCases)
    func bucketListAndUnratedRemovalsChangeNothing(engine: Engine) async throws {
        let store = try await Self.seeded(engine)
        #expect(try await Self.remove(16, as: TravelUsers.identityA, store: store) == (try JSONParser.parse(#"{"removed":16,"adjusted":[]}"#)))
        #expect(try await Self.remove(15, as: TravelUsers.identityA, store: store) == (try JSONParser.parse(#"{"removed":15,"adjusted":[]}"#)))
        #expect(try await Self.ratings(store, user: TravelUsers.a) == [11: .double(2), 12: .double(5), 13: .double(6), 14: .double(9)])
    }

    @Test(arguments: Engine.allCases)
    func anotherUsersCityOrAnonymousCallerIsRefused(engine: Engine) async throws {
        let store = try await Self.seeded(engine)
        let missing = await #expect(throws: CaravanError.self) { try await Self.remove(12, as: TravelUsers.identityB, store: store) }
        #expect(missing?.code == .notFound)
        let anonymous = await #expect(throws: CaravanError.self) { try await Self.remove(12, as: Identity(role: .anon), store: store) }
        #expect(anonymous?.code == .permissionDenied)
        #expect(try await Self.ratings(store, user: TravelUsers.a).count == 6)
    }
}

import CaravanCore
import CaravanTesting
import Foundation
@testable import LanguageExchange
import Testing

/// A seeded random world of profiles, swipes, matches, blocks and preferences, and the expected answer of
/// `find_language_matches` computed here from the seed alone (not from the store, not with the module's code).
struct MatchWorld {
    struct Person {
        let n: Int
        let native: String
        let learning: [String]
        let age: Int64?
        let lastActive: Int64?
        let location: String
        var hidesLocation = false
        var minAge: Int64 = 18
        var maxAge: Int64 = 99
        var hasPreferences = false
        var blocks: [Int] = []
    }

    static let codes = ["en", "ar", "es", "fr", "ja", "de"]
    var people: [Person] = []
    var swipes: [(Int, Int, String)] = []
    var matches: [(Int, Int)] = []

    init(seed: UInt64, count: Int) {
        var random = SplitMix64(state: seed)
        func pick(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
        for n in 1...count {
            let native = Self.codes[pick(Self.codes.count)]
            var learning: [String] = []
            for _ in 0...pick(3) {
                let code = Self.codes[pick(Self.codes.count)]
                if code != native, !learning.contains(code) { learning.append(code) }
            }
            if learning.isEmpty { learning = [native == "en" ? "ar" : "en"] }
            let age: Int64? = pick(8) == 0 ? nil : Int64(18 + pick(50))
            // Days ago 0…59 at random minutes, some exactly on the 7- and 30-day edges, some never active.
            let lastActive: Int64? = switch pick(10) {
            case 0: nil
            case 1: F.now - 7 * MatchScoring.day
            case 2: F.now - 30 * MatchScoring.day
            default: F.now - Int64(pick(60 * 24 * 60)) * 60_000_000
            }
            var person = Person(n: n, native: native, learning: learning, age: age, lastActive: lastActive, location: "City \(n)")
            if pick(3) == 0 {
                person.hasPreferences = true
                person.minAge = Int64(18 + pick(15))
                person.maxAge = person.minAge + Int64(pick(50))
                person.hidesLocation = pick(2) == 0
                if pick(3) == 0 { person.blocks = [1 + pick(count)].filter { $0 != n } }
            }
            people.append(person)
        }
        for _ in 0..<(count * 2) {
            let a = 1 + pick(count), b = 1 + pick(count)
            guard a != b, !swipes.contains(where: { $0.0 == a && $0.1 == b }) else { continue }
            swipes.append((a, b, ["left", "right", "super"][pick(3)]))
        }
        for _ in 0..<(count / 4) {
            let a = 1 + pick(count), b = 1 + pick(count)
            guard a != b, !matches.contains(where: { Set([$0.0, $0.1]) == Set([a, b]) }) else { continue }
            matches.append((a, b))
        }
    }

    /// The expected rows for `caller`, `limit` already clamped: (user number, score, location shown).
    func expected(for caller: Int, limit: Int) -> [(Int, Int64, String?)] {
        let me = people[caller - 1]
        let hidden = Set(swipes.filter { $0.0 == caller }.map(\.1))
            .union(matches.filter { $0.0 == caller }.map(\.1)).union(matches.filter { $0.1 == caller }.map(\.0))
            .union(me.blocks).union(people.filter { $0.blocks.contains(caller) }.map(\.n))
        var found: [(person: Person, score: Int64)] = []
        for other in people where other.n != caller && !hidden.contains(other.n) {
            if let age = other.age, age < me.minAge || age > me.maxAge { continue }
            let points = (other.learning.contains(me.native) ? 50 : 0) + (me.learning.contains(other.native) ? 50 : 0)
            if points == 0 { continue }
            var bonus: Int64 = 0
            if let seen = other.lastActive {
                let age = F.now - seen
                bonus = age < 7 * MatchScoring.day ? 10 : (age < 30 * MatchScoring.day ? 5 : 0)
            }
            found.append((other, Int64(points) + bonus))
        }
        found.sort { x, y in
            if x.score != y.score { return x.score > y.score }
            let a = x.person.lastActive ?? Int64.min, b = y.person.lastActive ?? Int64.min
            if a != b { return a > b }
            return F.uuid(x.person.n) < F.uuid(y.person.n)
        }
        return found.prefix(limit).map { ($0.person.n, $0.score, $0.person.hidesLocation ? nil : $0.person.location) }
    }

    /// Writes the world into `f`'s store.
    func seed(_ f: F) async throws {
        try await f.makeProfiles(people.map { p in
            F.profile(p.n, native: p.native, learning: p.learning, age: p.age, lastActive: p.lastActive, extra: ["location": .text(p.location)])
        })
        let people = self.people, swipes = self.swipes, matches = self.matches
        try await f.asService { tx in
            let preferences = people.filter(\.hasPreferences).map { p in
                RowValues(["user_id": .text(F.uuid(p.n)), "min_age": .integer(p.minAge), "max_age": .integer(p.maxAge),
                           "blocked_users": ColumnType.textArray(p.blocks.map(F.uuid)),
                           "privacy_settings": .json(p.hidesLocation ? #"{"show_location":false}"# : #"{"show_location":true}"#)])
            }
            if !preferences.isEmpty { _ = try await tx.insert(preferences, into: S.userPreferences, conflict: nil) }
            if !swipes.isEmpty {
                _ = try await tx.insert(swipes.map { RowValues(["swiper_id": .text(F.uuid($0.0)), "swiped_id": .text(F.uuid($0.1)), "direction": .text($0.2)]) },
                                  into: S.swipes, conflict: nil)
            }
            for (a, b) in matches {
                let (low, high) = F.uuid(a) < F.uuid(b) ? (a, b) : (b, a)
                _ = try await tx.insert([RowValues(["user1_id": .text(F.uuid(low)), "user2_id": .text(F.uuid(high)), "user1_liked": .bool(true)])], into: S.matches, conflict: nil)
            }
        }
    }
}

@Suite("LanguageExchange find_language_matches (item 3)")
struct FindLanguageMatchesTests {
    static func call(_ f: F, _ caller: Int, limit: Int?) async throws -> [(Int, Int64, String?)] {
        var arguments: [String: JSONValue] = ["p_user_id": .string(F.uuid(caller))]
        if let limit { arguments["p_limit"] = .integer(Int64(limit)) }
        guard case .table(let columns, let rows) = try await f.call("find_language_matches", as: F.uuid(caller), arguments) else {
            throw CaravanError(.internalFailure, "find_language_matches returned no table")
        }
        #expect(columns.map(\.name) == ["user_id", "first_name", "age", "location", "native_language", "learning_languages", "profile_image_url", "compatibility_score"])
        return rows.map { row in
            let n = Int(row[0].text?.suffix(12) ?? "") ?? -1
            guard case .integer(let score) = row[7] else { return (n, -1, nil) }
            return (n, score, row[3].text)
        }
    }

    @Test("equals an independent implementation over 120 seeded random profiles, for every caller and several limits", arguments: Engine.allCases)
    func matchesReference(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let world = MatchWorld(seed: 2026, count: 120)
        try await world.seed(f)
        var compared = 0
        for caller in stride(from: 1, through: 120, by: engine == .sqlite ? 1 : 3) {
            for (limit, clamped) in [(nil, 20), (3, 3), (0, 1), (500, 100)] as [(Int?, Int)] where caller % 4 == 1 || limit == nil {
                let got = try await Self.call(f, caller, limit: limit)
                let want = world.expected(for: caller, limit: clamped)
                #expect(got.map(\.0) == want.map(\.0), "caller \(caller) limit \(String(describing: limit)): ids")
                #expect(got.map(\.1) == want.map(\.1), "caller \(caller): scores")
                #expect(got.map(\.2) == want.map(\.2), "caller \(caller): locations")
                compared += 1
            }
        }
        #expect(compared > 40)
        #expect(world.people.contains { !world.expected(for: $0.n, limit: 100).isEmpty }, "the world has matches to compare")
    }

    @Test("p_user_id must be the caller (42501); anonymous callers are refused", arguments: Engine.allCases)
    func callerOnly(engine: Engine) async throws {
        let f = try await F(engine: engine)
        try await f.makeProfiles([F.profile(1), F.profile(2, native: "ar", learning: ["en"])])
        await expectFailure(.permissionDenied, naming: "p_user_id") {
            _ = try await f.call("find_language_matches", as: F.uuid(2), ["p_user_id": .string(F.uuid(1))])
        }
        await expectFailure(.permissionDenied, naming: "find_language_matches") {
            _ = try await f.call("find_language_matches", as: nil, ["p_user_id": .string(F.uuid(1))])
        }
        #expect(try await Self.call(f, 1, limit: nil).map(\.0) == [2])
    }
}

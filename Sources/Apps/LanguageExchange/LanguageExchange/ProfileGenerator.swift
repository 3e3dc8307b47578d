package import CaravanCore
import Foundation

/// Deterministic language-exchange users for benchmarks and demos (`caravan bench generate-profiles N --seed S`):
/// profile `i` of a seed is always the same row (its own random stream, so batch boundaries do not matter) — an auth
/// user, a profile and its preferences. Languages are real codes of the `languages` table, weighted by how many
/// people learn or speak them; `last_active` is spread over the 60 days before `anchor`, most users recent; ages
/// 18–70, younger more likely; age preferences around the user's own age; one in eight hides their location.
package struct ProfileGenerator: Sendable {
    package let seed: UInt64
    /// Microseconds since the epoch: `last_active` lies in the 60 days before it (pass a fixed one to reproduce rows).
    package let anchor: Int64
    /// The canonical codes drawn from, with their weights (those of `popular` the languages table holds).
    package let languages: [(code: String, weight: Int)]

    /// Common languages of a language-exchange app and their weights (canonical ISO 639-1 codes).
    package static let popular: [(code: String, weight: Int)] = [
        ("en", 22), ("ar", 14), ("es", 12), ("fr", 9), ("zh", 7), ("de", 7), ("ja", 6), ("pt", 5), ("ko", 5),
        ("ru", 4), ("hi", 4), ("it", 4), ("tr", 3), ("nl", 2), ("sv", 1), ("pl", 1),
    ]
    static let names = ["Amal", "Sam", "Noura", "Omar", "Lucía", "Pierre", "Yuki", "Min-jun", "Ana", "Ivan", "Priya", "Giulia",
                        "Emre", "Lena", "Wei", "Sara", "Khalid", "Mia", "João", "Fatima", "Hana", "Leo", "Aisha", "Tom"]
    static let cities = ["Riyadh", "Jeddah", "Cairo", "Dubai", "London", "New York", "Madrid", "Mexico City", "Paris", "Berlin",
                         "Tokyo", "Seoul", "Beijing", "São Paulo", "Moscow", "Mumbai", "Rome", "Istanbul", "Amsterdam", "Toronto"]
    static let levels = ["beginner", "elementary", "intermediate", "advanced"]
    static let goals = ["conversation", "travel", "business", "culture", "exams", "family"]
    static let day: Int64 = 86_400_000_000

    /// A generator over `languages` (canonical codes); 22023 when fewer than two are given.
    package init(seed: UInt64, anchor: Int64, languages: [(code: String, weight: Int)]) throws {
        guard Set(languages.map(\.code)).count >= 2 else {
            throw CaravanError(.invalidParameterValue, "generate-profiles needs at least two languages",
                               hint: "import the languages table first: caravan import languages iso639_3_languages.csv")
        }
        self.seed = seed
        self.anchor = anchor
        self.languages = languages
    }

    /// A generator over the languages of `popular` present in the `languages` table of `tx`.
    package static func load(seed: UInt64, anchor: Int64, in tx: any StoreTransaction) async throws -> ProfileGenerator {
        let table = LanguageExchangeSchema.languages
        let present = Set(try await tx.rows(table, ["code"], where: try table.isIn("code", popular.map(\.code))).compactMap { $0[0].textValue })
        return try ProfileGenerator(seed: seed, anchor: anchor, languages: popular.filter { present.contains($0.code) })
    }

    /// The rows of user `index`: `users`, `profiles`, `user_preferences`.
    package func rows(_ index: Int) -> (user: RowValues, profile: RowValues, preferences: RowValues) {
        var random = SplitMix64(state: seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(index) &* 0xBF58_476D_1CE4_E5B9)
        let id = random.uuid()
        let native = pick(&random, excluding: [])
        var learning: [String] = []
        let wanted = 1 + (random.unit() < 0.6 ? 0 : random.unit() < 0.75 ? 1 : 2)
        while learning.count < min(wanted, languages.count - 1) { learning.append(pick(&random, excluding: [native] + learning)) }
        let age = 18 + Int64(pow(random.unit(), 1.6) * 52)
        // Most users were here recently: the square of a uniform draw leans to 0 days ago.
        let lastActive = anchor - Int64(pow(random.unit(), 2) * Double(60 * Self.day))
        let levels = JSONValue.object(learning.map { (key: $0, value: .string(Self.levels[random.below(Self.levels.count)])) })
        var goals = Self.goals.filter { _ in random.unit() < 0.35 }
        if goals.isEmpty { goals = [Self.goals[random.below(Self.goals.count)]] }
        var profile = RowValues([
            "id": .text(id), "first_name": .text(Self.names[random.below(Self.names.count)]),
            "bio": .text("Native \(native) speaker learning \(learning.joined(separator: ", "))."), "age": .integer(age),
            "location": .text(Self.cities[random.below(Self.cities.count)]), "native_language": .text(native),
            "learning_languages": ColumnType.textArray(learning), "proficiency_levels": .json(levels.jsonText),
            "learning_goals": ColumnType.textArray(goals), "is_premium": .bool(random.unit() < 0.1),
        ])
        profile.set("granularity_level", .integer(Int64(random.below(4))))
        profile.set("created_at", .text(Timestamp.format(microseconds: lastActive - Int64(random.below(300)) * Self.day)))
        profile.set("last_active", .text(Timestamp.format(microseconds: lastActive)))
        let minAge = max(18, age - 5 - Int64(random.below(10)))
        let maxAge = min(99, age + 5 + Int64(random.below(15)))
        let showLocation = random.unit() >= 0.125
        let preferences = RowValues([
            "user_id": .text(id), "min_age": .integer(minAge), "max_age": .integer(maxAge),
            "privacy_settings": .json(#"{"show_location":\#(showLocation),"show_online":true}"#),
        ])
        return (RowValues(["id": .text(id)]), profile, preferences)
    }

    /// Writes users `range` in `tx` (the service role's): each row upserted by id, so a re-run of a seed rewrites the
    /// same rows. Returns how many profiles were written.
    package func write(_ range: Range<Int>, in tx: any StoreTransaction) async throws -> Int {
        let generated = range.map(rows)
        _ = try await tx.insert(generated.map(\.user), into: SystemModule.users, conflict: ConflictTarget(columns: ["id"], resolution: .ignore))
        _ = try await tx.insert(generated.map(\.profile), into: LanguageExchangeSchema.profiles, conflict: ConflictTarget(columns: ["id"], resolution: .merge))
        _ = try await tx.insert(generated.map(\.preferences), into: LanguageExchangeSchema.userPreferences,
                          conflict: ConflictTarget(columns: ["user_id"], resolution: .merge))
        return generated.count
    }

    func pick(_ random: inout SplitMix64, excluding: [String]) -> String {
        let choices = languages.filter { !excluding.contains($0.code) }
        var draw = random.below(choices.reduce(0) { $0 + $1.weight })
        for choice in choices {
            if draw < choice.weight { return choice.code }
            draw -= choice.weight
        }
        return choices[choices.count - 1].code
    }
}

/// The draws the generator makes from CaravanCore's `SplitMix64` (the same output on every platform).
extension SplitMix64 {
    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// Uniform in 0..<bound.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(1, bound))) }

    /// A version-4 UUID, lowercase.
    mutating func uuid() -> String {
        DeterministicID.format(high: next(), low: next())
    }
}

/// Version-4-shaped UUIDs from 128 bits.
enum DeterministicID {
    static func format(high: UInt64, low: UInt64) -> String {
        let a = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
        let b = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        let hex = String(format: "%016llx%016llx", a, b)
        let chars = Array(hex)
        return [chars[0..<8], chars[8..<12], chars[12..<16], chars[16..<20], chars[20..<32]].map { String($0) }.joined(separator: "-")
    }
}

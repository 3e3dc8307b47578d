package import CaravanCore

/// Deterministic, realistic places for scale tests, built from the real data: each generated place takes a real
/// place as its model (so categories follow the real distribution), names made of real name words (the model's
/// first word, such as `مقهى` / `Cafe`, then words drawn from other real names), coordinates near the model's
/// (within about 1.5 km, clamped to the Riyadh box of the data) and a rating. Place `i` depends only on the seed
/// and `i`, so any batch size gives the same places.
package struct PlacesGenerator: Sendable {
    struct Model: Sendable {
        let arabicWords: [String]
        let englishWords: [String]
        let category: String
        let categoryArabic: String
        let latitude: Double
        let longitude: Double
    }

    private let models: [Model]
    private let arabicWords: [String]
    private let englishWords: [String]
    package let seed: UInt64

    /// Learns from `entries` (places.json objects); throws when none has a name, a category and coordinates.
    package init(realEntries entries: [JSONValue], seed: UInt64) throws(CaravanError) {
        var models: [Model] = []
        var arabic: Set<String> = []
        var english: Set<String> = []
        for entry in entries {
            guard case .string(let nameAr)? = entry["name_ar"], case .string(let category)? = entry["category_en"],
                  case .double(let lat)? = entry["lat"], case .double(let lng)? = entry["lng"] else { continue }
            let nameEn: String = if case .string(let s)? = entry["name_en"] { s } else { "" }
            let categoryArabic: String = if case .string(let s)? = entry["category"] { s } else { "" }
            let ar = nameAr.split(separator: " ").map(String.init).filter { !$0.isEmpty }
            let en = nameEn.split(separator: " ").map(String.init).filter { !$0.isEmpty }
            guard !ar.isEmpty else { continue }
            models.append(Model(arabicWords: ar, englishWords: en, category: category, categoryArabic: categoryArabic, latitude: lat, longitude: lng))
            arabic.formUnion(ar.filter { TextFolding.tokens(in: $0).count == 1 })
            english.formUnion(en.filter { TextFolding.tokens(in: $0).count == 1 })
        }
        guard !models.isEmpty, !arabic.isEmpty else {
            throw CaravanError(.invalidFeed, "the places file has no place with a name, a category and coordinates to learn from")
        }
        self.models = models
        self.arabicWords = arabic.sorted()
        self.englishWords = english.sorted()
        self.seed = seed
    }

    /// The places.json object of generated place `index` (id `gen-<seed>-<index>`).
    package func place(_ index: Int) -> JSONValue {
        var random = SplitMix64(state: seed ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
        let model = models[random.next(below: models.count)]
        var nameAr = [model.arabicWords[0]]
        var nameEn = model.englishWords.isEmpty ? [] : [model.englishWords[0]]
        for _ in 0..<(1 + random.next(below: 2)) {
            nameAr.append(arabicWords[random.next(below: arabicWords.count)])
            if !nameEn.isEmpty, !englishWords.isEmpty { nameEn.append(englishWords[random.next(below: englishWords.count)]) }
        }
        // About 1.5 km of jitter, kept inside the data's box (24.4–25.1 N, 46.4–47.1 E).
        let latitude = min(25.1, max(24.4, model.latitude + (random.nextUnit() - 0.5) * 0.03))
        let longitude = min(47.1, max(46.4, model.longitude + (random.nextUnit() - 0.5) * 0.03))
        let rating = Double(10 + random.next(below: 41)) / 10
        var fields: [(String, JSONValue)] = [
            ("id", .string("gen-\(seed)-\(index)")),
            ("name_ar", .string(nameAr.joined(separator: " "))),
            ("category", .string(model.categoryArabic)),
            ("category_en", .string(model.category)),
            ("lat", .double((latitude * 1e7).rounded() / 1e7)),
            ("lng", .double((longitude * 1e7).rounded() / 1e7)),
            ("google_rating", .double(rating)),
            ("rating_count", .integer(Int64(random.next(below: 2000)))),
            ("tags", .array([.string(model.category)])),
        ]
        if !nameEn.isEmpty { fields.append(("name_en", .string(nameEn.joined(separator: " ")))) }
        return .object(fields)
    }
}

extension SplitMix64 {
    mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A double in [0, 1).
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

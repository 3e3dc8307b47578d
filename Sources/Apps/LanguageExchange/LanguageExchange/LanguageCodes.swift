import CaravanCore

/// Language codes of a profile against the `languages` table: each code given (any case; ISO 639-1, 639-3 or
/// 639-2/B) becomes the canonical code (`ara` → `ar`); an unknown one is 23514 naming the field.
struct LanguageCodes {
    /// Canonical code by every alias found, for the codes asked.
    let canonical: [String: String]

    /// Looks every code of `codes` up at once.
    init(resolving codes: [String], in tx: any StoreTransaction) async throws {
        let asked = Array(Set(codes.map { $0.lowercased() }))
        let languages = LanguageExchangeSchema.languages
        let filter = BoundPredicate.or([try languages.isIn("code", asked), try languages.isIn("iso639_3", asked), try languages.isIn("iso639_2b", asked)])
        var canonical: [String: String] = [:]
        for row in try await tx.rows(languages, ["code", "iso639_3", "iso639_2b"], where: filter) {
            guard let code = row[0].textValue else { continue }
            for alias in row.compactMap(\.textValue) { canonical[alias] = code }
        }
        self.canonical = canonical
    }

    /// The canonical code of `code`, or 23514 naming `field`.
    func require(_ code: String, field: String) throws -> String {
        guard let found = canonical[code.lowercased()] else { throw Failure.check(field, "unknown language code", value: code) }
        return found
    }
}

/// The language rules of a profile row: codes canonical and known, at least one learning language (each once),
/// proficiency keys among the learning languages. Returns the assignments that make the row canonical (empty when
/// it already is).
enum ProfileLanguages {
    static func canonicalize(_ row: StoredRow, in tx: any StoreTransaction) async throws -> RowValues {
        let native = row.text("native_language") ?? ""
        guard let learning = row["learning_languages"].textArrayValue, !learning.isEmpty else {
            throw Failure.check("profiles.learning_languages", "learn at least one language")
        }
        guard let levels = row["proficiency_levels"].jsonObject else {
            throw Failure.check("profiles.proficiency_levels", "must be an object of language code to level")
        }
        let codes = try await LanguageCodes(resolving: [native] + learning + levels.map(\.key), in: tx)
        let canonicalNative = try codes.require(native, field: "profiles.native_language")
        var canonicalLearning: [String] = []
        for (index, code) in learning.enumerated() {
            let found = try codes.require(code, field: "profiles.learning_languages[\(index)]")
            if !canonicalLearning.contains(found) { canonicalLearning.append(found) }
        }
        var canonicalLevels: [(key: String, value: JSONValue)] = []
        for (key, level) in levels {
            let found = try codes.require(key, field: "profiles.proficiency_levels.\(key)")
            guard canonicalLearning.contains(found) else {
                throw Failure.check("profiles.proficiency_levels.\(key)", "a proficiency level is for a language being learned", value: key)
            }
            canonicalLevels.removeAll { $0.key == found }
            canonicalLevels.append((found, level))
        }
        var changes = RowValues(columns: [], values: [])
        if canonicalNative != native { changes.set("native_language", .text(canonicalNative)) }
        if canonicalLearning != learning { changes.set("learning_languages", ColumnType.textArray(canonicalLearning)) }
        if canonicalLevels.map(\.key) != levels.map(\.key) {
            changes.set("proficiency_levels", .json(JSONValue.object(canonicalLevels).jsonText))
        }
        return changes
    }
}

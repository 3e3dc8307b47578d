import CaravanCore
import CaravanTesting
import Foundation
@testable import LanguageExchange
import Testing

/// A migrated store with the module on a fixed clock, the languages of `fixtureLanguages` loaded from the real
/// `../shared/data/languages/iso639_3_languages.csv`, and helpers to seed rows and act as a signed-in user.
final class LanguageExchangeFixture: ModuleFixture {
    let store: any Store
    let catalog: Catalog
    let pipeline: WritePipeline
    static let now = Timestamp.parseMicroseconds("2026-11-25T12:00:00Z") ?? 0

    /// The ISO 639-3 codes the fixture loads (a full load is `LanguageImporterTests`' job).
    static let fixtureLanguages: Set<String> = ["ara", "eng", "spa", "fra", "deu", "jpn", "zho", "kor", "ita", "por", "rus", "tur", "hin", "cmn", "arz"]

    convenience init(engine: Engine, languages: Set<String>? = fixtureLanguages) async throws {
        try await self.init(store: try await engine.makeStore(migrations: LanguageExchangeMigrations.all), languages: languages)
    }

    /// On a store already migrated with the module.
    init(store: any Store, languages: Set<String>? = fixtureLanguages) async throws {
        let module = LanguageExchangeModule.make(clock: .fixed(microseconds: Self.now))
        self.store = store
        catalog = try Catalog.validated(modules: [SystemModule.module, module])
        pipeline = WritePipeline(store: store, publisher: ChangePublisher())
        if let languages {
            let csv = try Self.languagesCSV(keeping: languages)
            _ = try await asService { tx in try await LanguageImporter.load(csv: csv, in: tx) }
        }
    }

    /// The real languages file.
    static var languagesPath: String {
        sharedDataFile("languages/iso639_3_languages.csv") ?? "../shared/data/languages/iso639_3_languages.csv"
    }

    /// The header and the records of `codes` (all when nil).
    static func languagesCSV(keeping codes: Set<String>?) throws -> String {
        let text = try String(contentsOfFile: languagesPath, encoding: .utf8)
        guard let codes else { return text }
        let lines = text.split(whereSeparator: \.isNewline)
        return ([lines[0]] + lines.dropFirst().filter { codes.contains(String($0.prefix(3))) }).joined(separator: "\n") + "\n"
    }




    /// A profile for user `n` (the auth user too), learning `learning`, natively speaking `native`.
    static func profile(_ n: Int, native: String = "en", learning: [String] = ["ar"], age: Int64? = 30, lastActive: Int64? = nil,
                        extra: KeyValuePairs<String, Value> = [:]) -> RowValues {
        var row = RowValues(["id": .text(uuid(n)), "first_name": .text("User \(n)"), "native_language": .text(native),
                             "learning_languages": ColumnType.textArray(learning), "age": age.map(Value.integer) ?? .null])
        row.set("last_active", lastActive.map { .text(Timestamp.format(microseconds: $0)) } ?? .null)
        for (key, value) in extra { row.set(key, value) }
        return row
    }

    /// Auth users and the given profiles.
    func makeProfiles(_ rows: [RowValues]) async throws {
        try await asService { tx in
            _ = try await tx.insert(rows.compactMap { $0["id"] }.map { RowValues(["id": $0]) }, into: SystemModule.users, conflict: nil)
            _ = try await tx.insert(rows, into: LanguageExchangeSchema.profiles, conflict: nil)
        }
    }
}

typealias F = LanguageExchangeFixture
let S = LanguageExchangeSchema.self

extension Value {
    var text: String? { if case .text(let t) = self { t } else { nil } }
    var strings: [String]? {
        guard case .json(let raw) = self, case .array(let items)? = try? JSONParser.parse(raw) else { return nil }
        return items.compactMap { if case .string(let s) = $0 { s } else { nil } }
    }
}

import CaravanCore
import CaravanEngineTesting
import Foundation
@testable import LanguageExchange
import Testing

/// A migrated store with the module on a fixed clock, the languages of `fixtureLanguages` loaded from the real
/// `../shared/data/languages/iso639_3_languages.csv`, and helpers to seed rows and act as a signed-in user.
final class LanguageExchangeFixture: Sendable {
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
            _ = try await asService { tx in try LanguageImporter.load(csv: csv, in: tx) }
        }
    }

    /// The real languages file.
    static var languagesPath: String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.deletingLastPathComponent().appendingPathComponent("shared/data/languages/iso639_3_languages.csv").path
    }

    /// The header and the records of `codes` (all when nil).
    static func languagesCSV(keeping codes: Set<String>?) throws -> String {
        let text = try String(contentsOfFile: languagesPath, encoding: .utf8)
        guard let codes else { return text }
        let lines = text.split(whereSeparator: \.isNewline)
        return ([lines[0]] + lines.dropFirst().filter { codes.contains(String($0.prefix(3))) }).joined(separator: "\n") + "\n"
    }

    static func uuid(_ n: Int) -> String { String(format: "00000000-0000-4000-8000-%012d", n) }

    func asService<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) throws -> T) async throws -> T {
        try await pipeline.run(catalog.access(for: .serviceRole), body)
    }

    func asUser<T: Sendable>(_ id: String, _ body: @escaping @Sendable (any StoreTransaction) throws -> T) async throws -> T {
        try await pipeline.run(catalog.access(for: Identity(role: .authenticated, userID: id)), body)
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
            _ = try tx.insert(rows.compactMap { $0["id"] }.map { RowValues(["id": $0]) }, into: SystemModule.users, conflict: nil)
            _ = try tx.insert(rows, into: LanguageExchangeSchema.profiles, conflict: nil)
        }
    }

    /// Calls the module's RPC `name` as `user` (nil: the service role).
    func call(_ name: String, as user: String?, _ arguments: [String: JSONValue]) async throws -> RPCResult {
        let function = try catalog.requireFunction(name)
        let bound = try function.bind(arguments)
        let identity = user.map { Identity(role: .authenticated, userID: $0) } ?? .serviceRole
        return try await pipeline.run(catalog.access(for: identity)) { tx in try function.body(bound, tx) }
    }

    /// Every row of `table` (service role) as dictionaries.
    func rows(_ table: TableSchema, where filter: BoundPredicate = .constant(true)) async throws -> [[String: Value]] {
        let result = try await store.fetch(try ReadPlan(table: table, query: Query(), access: filter, maxRows: nil, includeCount: false))
        return result.rows.map { Dictionary(uniqueKeysWithValues: zip(result.outputs.map(\.name), $0)) }
    }
}

/// Expects `body` to fail with `code`, its message or details mentioning `field`.
func expectFailure(_ code: CaravanError.Code, naming field: String, sourceLocation: SourceLocation = #_sourceLocation,
                   _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(code) naming \(field), but it succeeded", sourceLocation: sourceLocation)
    } catch let error as CaravanError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        let text = error.message + " " + (error.details ?? "") + " " + (error.hint ?? "")
        #expect(text.contains(field), "\(error) details \(error.details ?? "-")", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected CaravanError \(code), got \(error)", sourceLocation: sourceLocation)
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

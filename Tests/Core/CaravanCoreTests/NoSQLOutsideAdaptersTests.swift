import Foundation
import Testing

/// SQL lives only in the storage adapters (and the shared serializer) and in committed migration files: the core,
/// auth and every app module are declarations and Swift functions.
@Suite struct NoSQLOutsideAdaptersTests {
    static let sourcesRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// Statement shapes of SQL, in capitals as every statement of Caravan writes them; doc comments may mention
    /// them in prose (`EXISTS (SELECT 1 …)` in a `///` line describes a predicate, it builds nothing).
    static let statementPattern = (
        #"\b(SELECT\s+\S|INSERT\s+INTO|CREATE\s+(TABLE|INDEX|UNIQUE|TRIGGER|FUNCTION|VIRTUAL|SCHEMA|EXTENSION)|ALTER\s+TABLE|DROP\s+(TABLE|INDEX|TRIGGER)|DELETE\s+FROM|UPDATE\s+"?\w+"?\s+SET|PRAGMA\s+\w)"#
    )

    static func swiftFiles(under folder: String) -> [URL] {
        let root = sourcesRoot.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    }

    static func offendingLines(in file: URL) throws -> [String] {
        let statement = try Regex(statementPattern)
        let text = try String(contentsOf: file, encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { number, line in
            let code = line.trimmingCharacters(in: .whitespaces)
            guard !code.hasPrefix("///"), !code.hasPrefix("//"), code.contains(statement) else { return nil }
            return "\(file.lastPathComponent):\(number + 1): \(code.prefix(100))"
        }
    }

    @Test(arguments: [
        "Core/CaravanCore", "Services/CaravanAuth", "Services/CaravanStorage", "Services/CaravanSync", "Services/CaravanRealtime",
        "Apps/Places/Places", "Apps/Transit/Transit", "Apps/TravelLog/TravelLog", "Apps/GroupDecisions/GroupDecisions",
        "Apps/LanguageExchange/LanguageExchange", "Apps/Places/PlacesCommands", "Apps/TravelLog/TravelLogCommands",
        "Apps/GroupDecisions/GroupDecisionsCommands", "Apps/Transit/TransitCommands", "Apps/LanguageExchange/LanguageExchangeCommands",
        "Server/CaravanCLI", "Server/CaravanServer", "Client/CaravanClient", "Client/CaravanClientModels", "Client/caravan-client", "../Examples/Notes/Sources",
    ])
    func hasNoSQLInItsSwiftSources(module: String) throws {
        let files = Self.swiftFiles(under: module)
        #expect(!files.isEmpty, "no Swift sources found under Sources/\(module)")
        let offending = try files.flatMap(Self.offendingLines)
        #expect(offending.isEmpty, "SQL in Sources/\(module):\n\(offending.joined(separator: "\n"))")
    }

    @Test func theCheckFindsSQLWhereThereIsSome() throws {
        let sample = FileManager.default.temporaryDirectory.appendingPathComponent("caravan-sql-sample-\(UUID().uuidString).swift")
        try #"let sql = "SELECT id FROM places""#.write(to: sample, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: sample) }
        #expect(try Self.offendingLines(in: sample).count == 1)
    }
}

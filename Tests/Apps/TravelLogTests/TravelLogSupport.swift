import CaravanCore
import CaravanTesting
import Foundation
import Testing
import TravelLog

let travelCatalog = Catalog(modules: [SystemModule.module, TravelLogModule.module])
let hasWorld = sharedDataFile("world/world_cities15000.csv") != nil && sharedDataFile("world/countries.csv") != nil

/// The real GeoNames files, read once.
enum WorldFiles {
    static let countries: String = read("world/countries.csv")
    static let cities: String = read("world/world_cities15000.csv")
    /// Countries whose every city is kept in the PostgreSQL subset (the tests' named cities live there).
    static let subsetCountries: Set<Substring> = ["NA", "CH", "AE", "BH", "CM", "DZ", "AD", "SA", "US"]

    /// What the engine imports: the whole file on SQLite; on PostgreSQL (the pipeline import of 34k rows is slow in
    /// a debug build) a real subset: every city of `subsetCountries` and every city of 100,000 people or more.
    static func cities(for engine: Engine) throws -> String {
        guard engine == .postgres else { return cities }
        let lines = cities.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        let kept = try WorldCSV.table(cities).rows.filter { record in
            subsetCountries.contains(Substring(record.values["country_code"] ?? "")) || (Int(record.values["population"] ?? "") ?? 0) >= 100_000
        }.map { lines[$0.line - 1] }
        return ([lines[0]] + kept).joined(separator: "\n") + "\n"
    }

    /// The number of records of `csv` (lines after the header).
    static func recordCount(_ csv: String) -> Int { csv.split(whereSeparator: \.isNewline).count - 1 }

    private static func read(_ name: String) -> String {
        guard let path = sharedDataFile(name), let data = FileManager.default.contents(atPath: path) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// The real 252 countries and 34,006 cities, imported once per test process and engine into a temporary store
/// (tests only read it, or write inside rolled-back transactions).
actor RealWorld {
    static let shared = RealWorld()
    private var loading: [Engine: Task<(any Store, WorldImporter.Summary), any Error>] = [:]

    func get(_ engine: Engine) async throws -> (store: any Store, summary: WorldImporter.Summary) {
        if let task = loading[engine] { return try await task.value }
        let task = Task { () throws -> (any Store, WorldImporter.Summary) in
            let store = try await engine.makeStore(migrations: travelCatalog.migrations)
            let importer = WorldImporter(pipeline: WritePipeline(store: store, publisher: ChangePublisher()),
                                         access: travelCatalog.access(for: .serviceRole), batchSize: 2000)
            return (store, try await importer.run(countriesCSV: WorldFiles.countries, citiesCSV: try WorldFiles.cities(for: engine)))
        }
        loading[engine] = task
        return try await task.value
    }
}

enum TravelUsers {
    static let a = "aaaaaaaa-0000-4000-8000-00000000000a"
    static let b = "bbbbbbbb-0000-4000-8000-00000000000b"
    static let identityA = Identity(role: .authenticated, userID: a)
    static let identityB = Identity(role: .authenticated, userID: b)

    /// Inserts users A and B (user_city references users).
    static func insert(in transaction: any StoreTransaction) async throws {
        _ = try await transaction.asServiceRole { tx in
            try await tx.insert([a, b].map { RowValues(["id": .text($0)]) }, into: SystemModule.users, conflict: nil)
        }
    }
}

/// Calls an RPC function as `identity` inside `transaction`.
func callTravel(_ function: String, _ arguments: [String: JSONValue], in transaction: any StoreTransaction) async throws -> RPCResult {
    let rpc = try travelCatalog.requireFunction(function)
    return try await rpc.body(try rpc.bind(arguments), transaction)
}

/// The rows of a `.table` result as dictionaries.
func tableRows(_ result: RPCResult) -> [[String: Value]] {
    guard case .table(let columns, let rows) = result else { return [] }
    return rows.map { Dictionary(uniqueKeysWithValues: zip(columns.map(\.name), $0)) }
}

/// The JSON of a `.scalar(.json)` result.
func jsonResult(_ result: RPCResult) -> JSONValue {
    guard case .scalar(let value) = result else { return .null }
    return JSONValue(value)
}

/// Runs `body` as `identity` in a transaction of `store` that is rolled back.
func inRolledBack<T: Sendable>(_ store: any Store, as identity: Identity = .serviceRole,
                               _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> T {
    try await store.transaction(travelCatalog.access(for: identity), rollback: true, grant: TransactionGrant(), body).0
}

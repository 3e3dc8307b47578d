import ArgumentParser
import CaravanClient
import CaravanClientModels
import CaravanCore
import Foundation
import Places

/// `caravan-client bench-insert`: a typed local insert (`store.insert(Place(...))`) beside the `JSONValue` one
/// (`store.insert("places", row, now:)`) of the same rows. Each sample inserts the next place both ways, each into its
/// own fresh store, alternating which goes first; each insert is its own transaction (with its outbox entry), as an
/// app's are. Prints one JSON line (microseconds).
struct BenchInsert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-insert",
        abstract: "Measure a typed local insert beside the JSONValue one, on the places of a places.json (no server)."
    )
    @Option(help: "The places.json whose places are inserted (e.g. ../shared/data/riyadh/places.json).") var places: String
    @Option(help: "Inserts timed each way (at most the number of places).") var samples = 1000
    @Option(help: "Where the scratch stores go (default: a temporary directory; removed after).") var directory: String?
    @Option(help: "Where the inserts are made from: main (the main actor, as a view's action) or task (a task off any actor).")
    var caller: Caller = .main

    func run() async throws {
        let root = try BenchLive.scratch(directory, "insert")
        defer { if directory == nil { try? FileManager.default.removeItem(atPath: root) } }
        let rows = try BenchLive.placeRows(places)
        let records = try rows.map { try Place(row: $0) }
        let tables = PlacesModule.module.tables.filter(\.isSynced)
        // The JSON insert gets the row the typed one sends, from the same record: every column named but those left
        // to their defaults (a nil property of a column with a default), so both store the same row.
        guard let table = tables.first(where: { $0.name == "places" }) else { throw ValidationError("the places app has no places table") }
        let sent = try records.map { record -> JSONValue in
            guard case .object(let pairs) = try RecordCoding.json(record) else { return .null }
            return .object(pairs.filter { $0.value != .null || table.column(named: $0.key)?.defaultValue == nil })
        }
        let typedStore = try LocalStore(path: root + "/typed.sqlite", tables: tables)
        let jsonStore = try LocalStore(path: root + "/json.sqlite", tables: tables)
        let count = min(samples + 20, records.count)
        let measured: (typed: [Double], json: [Double])
        switch caller {
        case .main: measured = try await Task { @MainActor in try await Self.measure(count, records, sent, typedStore, jsonStore) }.value
        case .task: measured = try await Task.detached { try await Self.measure(count, records, sent, typedStore, jsonStore) }.value
        }
        let (typed, json) = measured
        let mean = { (values: [Double]) in values.reduce(0, +) / Double(max(values.count, 1)) }
        printJSON(.object([
            ("table", .string("places")), ("caller", .string(caller.rawValue)), ("samples", .integer(Int64(typed.count))),
            ("typed_insert_us", BenchLive.summary(typed)), ("json_insert_us", BenchLive.summary(json)),
            ("typed_mean_us", .integer(Int64(mean(typed)))), ("json_mean_us", .integer(Int64(mean(json)))),
            ("typed_over_json", .double((mean(typed) / mean(json) * 100).rounded() / 100)),
        ]))
    }

    /// Inserts the first `count` places both ways, alternating which goes first; the times after 20 warm-up inserts.
    /// Runs where its caller runs: on the main actor (a typed insert then leaves it for its commit and comes back), or
    /// in a task off any actor.
    nonisolated(nonsending) static func measure(_ count: Int, _ records: [Place], _ sent: [JSONValue], _ typedStore: LocalStore,
                                                _ jsonStore: LocalStore) async throws -> (typed: [Double], json: [Double]) {
        var typed: [Double] = []
        var json: [Double] = []
        for index in 0..<count {
            func timeTyped() async throws -> Double {
                let start = ContinuousClock.now
                try await typedStore.insert(records[index])
                return BenchLive.microseconds(ContinuousClock.now - start)
            }
            func timeJSON() throws -> Double {
                let start = ContinuousClock.now
                try jsonStore.insert("places", sent[index], now: nowText())
                return BenchLive.microseconds(ContinuousClock.now - start)
            }
            let a: Double
            let b: Double
            if index.isMultiple(of: 2) {
                a = try await timeTyped()
                b = try timeJSON()
            } else {
                b = try timeJSON()
                a = try await timeTyped()
            }
            guard index >= 20 else { continue }   // warm-up
            typed.append(a)
            json.append(b)
        }
        return (typed, json)
    }

    enum Caller: String, ExpressibleByArgument {
        case main, task
    }
}

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

    func run() async throws {
        let root = try BenchLive.scratch(directory, "insert")
        defer { if directory == nil { try? FileManager.default.removeItem(atPath: root) } }
        let rows = try BenchLive.placeRows(places)
        let records = try rows.map { try Place(row: $0) }
        // The JSON insert gets the row the typed one sends: every column named, from the same record.
        let sent = try records.map { try RecordCoding.json($0) }
        let tables = PlacesModule.module.tables.filter(\.isSynced)
        let typedStore = try LocalStore(path: root + "/typed.sqlite", tables: tables)
        let jsonStore = try LocalStore(path: root + "/json.sqlite", tables: tables)
        let count = min(samples + 20, records.count)
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
        let mean = { (values: [Double]) in values.reduce(0, +) / Double(max(values.count, 1)) }
        printJSON(.object([
            ("table", .string("places")), ("samples", .integer(Int64(typed.count))),
            ("typed_insert_us", BenchLive.summary(typed)), ("json_insert_us", BenchLive.summary(json)),
            ("typed_mean_us", .integer(Int64(mean(typed)))), ("json_mean_us", .integer(Int64(mean(json)))),
            ("typed_over_json", .double((mean(typed) / mean(json) * 100).rounded() / 100)),
        ]))
    }
}

import ArgumentParser
import CaravanClient
import CaravanClientModels
import CaravanCore
import Foundation
import Places

/// `caravan-client bench-live`: how long a live query takes to show a one-row change. The places of a places.json
/// are loaded into a fresh store (as one pulled page); then, `samples` times, one row the query shows is changed —
/// by a local write, or by a server change applied as realtime applies it — and the time to the query's next result
/// holding it is taken. Prints one JSON line per query and kind of change (microseconds).
struct BenchLive: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-live",
        abstract: "Measure live-query refresh after a one-row change on the places of a places.json (no server)."
    )
    @Option(help: "The places.json to load (e.g. ../shared/data/riyadh/places.json).") var places: String
    @Option(help: "Changes timed per query and kind of change.") var samples = 500
    @Option(help: "Where the scratch store goes (default: a temporary directory; removed after).") var directory: String?

    func run() async throws {
        let root = try Self.scratch(directory, "live")
        defer { if directory == nil { try? FileManager.default.removeItem(atPath: root) } }
        let probe = try freshStore(root + "/probe.sqlite")
        let loaded = try load(into: probe)
        // The largest category: the list screen's query.
        let all = try await probe.fetch(Place.self)
        let category = Dictionary(grouping: all, by: \.category).max { $0.value.count < $1.value.count }?.key ?? "cafe"
        let queries: [(name: String, predicate: CaravanCore.Predicate, order: [OrderTerm], limit: Int?)] = [
            ("all \(loaded) places by name", .constant(true), [OrderTerm(Place.CodingKeys.nameAr)], nil),
            ("top 50 of category \(category) by rating", .column(Place.CodingKeys.category, .eq, category),
             [OrderTerm(Place.CodingKeys.googleRating, .descending)], 50),
        ]
        var run = 0
        for query in queries {
            for kind in ["local write", "server change"] {
                // A fresh store for each: a row with a local write waiting ignores server changes.
                let store = try freshStore(root + "/\(run).sqlite")
                _ = try load(into: store)
                var results = try store.live(Place.self, where: query.predicate, order: query.order, limit: query.limit).makeAsyncIterator()
                guard let first = try await results.next(), !first.isEmpty else { throw ValidationError("the query shows no place") }
                run += 1
                var refresh: [Double] = []
                var endToEnd: [Double] = []
                for sample in 0..<(samples + 20) {
                    var place = first[sample % first.count]
                    let mark = "bench \(kind) \(sample)"
                    place.nameEn = mark
                    let start = ContinuousClock.now
                    if kind == "local write" {
                        try await store.update(place)
                    } else {
                        let record = try RecordCoding.json(place)
                        _ = try store.apply(PullReply(changes: [PulledRow(seq: 100_000 + Int64(sample), table: "places", operation: .upsert, key: .object([("id", .string(place.id))]),
                                                                           record: record)], cursor: nil, hasMore: false),
                                            scope: ["places"], now: nowMicroseconds() / 1_000_000)
                    }
                    let committed = ContinuousClock.now
                    while let next = try await results.next() {
                        if next.contains(where: { $0.nameEn == mark }) { break }
                    }
                    let shown = ContinuousClock.now
                    guard sample >= 20 else { continue }   // warm-up
                    refresh.append(Self.microseconds(shown - committed))
                    endToEnd.append(Self.microseconds(shown - start))
                }
                printJSON(.object([
                    ("query", .string(query.name)), ("change", .string(kind)), ("samples", .integer(Int64(samples))),
                    ("rows", .integer(Int64(first.count))),
                    ("refresh_after_commit_us", Self.summary(refresh)), ("write_to_result_us", Self.summary(endToEnd)),
                ]))
            }
        }
    }

    func freshStore(_ path: String) throws -> LocalStore {
        try LocalStore(path: path, tables: PlacesModule.module.tables.filter(\.isSynced))
    }

    /// Loads the places as one pulled page; returns how many.
    func load(into store: LocalStore) throws -> Int {
        let changes = try Self.placeRows(places).enumerated().map { index, record in
            PulledRow(seq: Int64(index + 1), table: "places", operation: .upsert, key: .object([("id", record["id"] ?? .null)]), record: record)
        }
        return try store.apply(PullReply(changes: changes, cursor: nil, hasMore: false), scope: ["places"], now: nowMicroseconds() / 1_000_000)
    }

    /// The places of a places.json as the importer maps them into rows (those it rejects left out), as JSON objects.
    static func placeRows(_ path: String) throws -> [JSONValue] {
        let document = try JSONParser.parse(String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self))
        return try PlacesImporter.entries(of: document).compactMap { entry in
            guard let row = try? PlaceRecordMapping.row(from: entry) else { return nil }   // the importer's rejections
            return JSONValue.object(zip(row.columns, row.values).map { ($0, JSONValue($1)) })
        }
    }

    /// The scratch directory of a bench: `directory`, or a new temporary one; made.
    static func scratch(_ directory: String?, _ bench: String) throws -> String {
        let root = directory ?? NSTemporaryDirectory() + "caravan-bench-\(bench)-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        return root
    }

    static func microseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
    }

    /// p50, p99 and the maximum of `values`.
    static func summary(_ values: [Double]) -> JSONValue {
        let sorted = values.sorted()
        func at(_ fraction: Double) -> JSONValue { .integer(Int64(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))])) }
        return .object([("p50", at(0.5)), ("p99", at(0.99)), ("max", .integer(Int64(sorted.last ?? 0)))])
    }
}

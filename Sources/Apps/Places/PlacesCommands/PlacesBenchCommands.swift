import ArgumentParser
import CaravanCLI
package import CaravanCore
import CaravanDeployment
import CaravanSQLite
import Foundation
import Places

/// A places.json file (`caravan import places`, and the restaurants GroupDecisions takes from it).
package enum PlacesFile {
    /// The file's entries, or a validation error naming the file.
    package static func entries(at path: String) throws -> [JSONValue] {
        guard let contents = FileManager.default.contents(atPath: path) else { throw ValidationError("cannot read \(path)") }
        do {
            return try PlacesImporter.entries(of: try JSONParser.parse(bytes: Array(contents)))
        } catch {
            throw ValidationError("\(path) is not a places.json file: \(error.details ?? error.message)")
        }
    }
}

/// `caravan bench generate-places N --seed S`: N deterministic places (see `PlacesGenerator`) imported through the
/// write pipeline, then categories synced.
struct GeneratePlaces: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "generate-places",
                                                    abstract: "Add N generated places (deterministic for a seed) to a deployment.")
    @OptionGroup var data: DataOptions
    @Argument(help: "How many places.") var count: Int
    @Option(help: "The generator's seed.") var seed: UInt64 = 1
    @Option(help: "The real places.json whose names, categories and coordinates are the model.")
    var source = "../shared/data/riyadh/places.json"
    @Option(name: .customLong("batch-size"), help: "Rows per transaction.") var batchSize = 5000

    func run() async throws {
        guard count > 0 else { throw ValidationError("N must be positive") }
        let configuration = try data.resolve()
        let generator = try PlacesGenerator(realEntries: try PlacesFile.entries(at: source), seed: seed)
        // A generator makes a benchmark's data set: it creates the deployment (and says so) when there is none.
        let deployment = try await openDeployment(configuration, logger: makeLogger(level: "warning"), creating: true)
        let pipeline = WritePipeline(store: deployment.store, publisher: ChangePublisher())
        let access = try deploymentCatalog(configuration).access(for: .serviceRole)
        let importer = PlacesImporter(pipeline: pipeline, access: access, batchSize: max(1, batchSize))
        let started = ContinuousClock.now
        var inserted = 0, updated = 0, rejected = 0
        var start = 0
        while start < count {
            let end = min(start + max(1, batchSize), count)
            let summary = try await importer.run((start..<end).map(generator.place), dryRun: false)
            inserted += summary.inserted
            updated += summary.updated
            rejected += summary.rejections.count
            start = end
            if isatty(STDERR_FILENO) == 1 { writeStandardError("\r\(end)/\(count)") }
        }
        if isatty(STDERR_FILENO) == 1 { writeStandardError("\n") }
        let reference = try await PlacesReferenceData(pipeline: pipeline, access: access).sync(districtsCSV: nil)
        let elapsed = ContinuousClock.now - started
        writeStandardOutput("\(count) generated places (seed \(seed)): \(inserted) inserted, \(updated) updated, \(rejected) rejected; "
            + "\(reference.categories) categories; \(elapsed.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1))))\n")
        await deployment.close()
    }
}

/// `caravan bench search`: p50/p95 of search_places and nearby_places called in-process (as anon, in the RPC's
/// transaction, as REST does), each beside its floor (the raw FTS5 / R*Tree query on the same file).
struct BenchSearch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "search", abstract: "Time search_places and nearby_places in-process.")
    @OptionGroup var data: DataOptions
    @Option(help: "Questions per measurement.") var samples = 500
    @Option(help: "Seed of the question sample.") var seed: UInt64 = 7
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let configuration = try data.resolve()
        let deployment = try await openDeployment(configuration, logger: makeLogger(level: "warning"))
        // The floors are raw FTS5 and R*Tree queries on the SQLite file.
        guard let store = deployment.sqliteStore else {
            await deployment.close()
            throw ValidationError("caravan bench search measures the SQLite engine (--data-dir), not --database")
        }
        let catalog = try deploymentCatalog(configuration)
        let (queries, points) = try await questions(store)
        let figures = try await measure(store, access: catalog.access(for: Identity(role: .anon)), catalog: catalog, queries: queries, points: points)
        let total = try await store.fetch(try ReadPlan(table: PlacesSchema.places, query: Query(limit: 0), access: .constant(true), maxRows: nil, includeCount: true)).totalCount ?? 0
        await deployment.close()
        report(figures, places: total)
    }

    /// Questions from the places themselves: a name's first word and the start of the next (type-ahead), or a
    /// whole first word; points at places' coordinates.
    func questions(_ store: SQLiteStore) async throws -> (queries: [String], points: [(Double, Double)]) {
        let sample = try await store.fetch(try ReadPlan(
            table: PlacesSchema.places,
            query: try QueryParser.parseRead(QueryString("select=name_ar,name_en,latitude,longitude&latitude=not.is.null")),
            access: .constant(true), maxRows: nil, includeCount: false))
        guard !sample.rows.isEmpty else { throw ValidationError("no places with coordinates; import or generate some first") }
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        var queries: [String] = []
        var points: [(Double, Double)] = []
        for i in 0..<samples {
            let row = sample.rows[next(sample.rows.count)]
            let name: String = if i % 2 == 0, case .text(let en) = row[1] { en } else if case .text(let ar) = row[0] { ar } else { "cafe" }
            let words = TextFolding.tokens(in: name)
            if words.count >= 2, i % 3 != 0 { queries.append("\(words[0]) \(words[1].prefix(3))") } else { queries.append(words.first ?? "cafe") }
            if case .double(let lat) = row[2], case .double(let lng) = row[3] { points.append((lat, lng)) }
        }
        return (queries, points)
    }

    /// Each RPC, the parts of search_places, and the raw floors on the same file.
    func measure(_ store: SQLiteStore, access anon: AccessContext, catalog: Catalog, queries: [String], points: [(Double, Double)]) async throws -> [LatencyFigures] {
        let search = try catalog.requireFunction("search_places")
        let nearby = try catalog.requireFunction("nearby_places")
        let searchArguments = try queries.map { try search.bind(["query": .string($0), "max_results": .integer(20)]) }
        let nearbyArguments = try points.map { try nearby.bind(["lat": .double($0.0), "lng": .double($0.1), "radius_m": .integer(5000), "max_results": .integer(20)]) }
        let outputs = try ["id"].map { try PlacesSchema.places.requireColumn($0) }
        func ranked(_ ranking: @escaping @Sendable (Int) -> RankedSearch.Ranking) -> (Int) async throws -> Int {
            { i in
                try await store.readOnly(anon) { tx in
                    try await tx.rankedFetch(RankedSearch(table: PlacesSchema.places, ranking: ranking(i), filter: try tx.access.readRule(PlacesSchema.places),
                                                    outputs: outputs, limit: 20)).count
                }
            }
        }
        return [
            try await LatencyFigures.measure("search_places (RPC, anon, top 20)", samples: samples) { try await rpcRowCount(search, searchArguments[$0], store: store, access: anon) },
            try await LatencyFigures.measure("  part: full-text ranking (rankedFetch)", samples: samples,
                                             ranked { .fullText(.typeAhead(queries[$0]), boost: ScoreBoost(column: "google_rating", weight: 0.1)) }),
            try await LatencyFigures.measure("  part: trigram similarity (rankedFetch)", samples: samples, ranked { .similarity(queries[$0], minimum: 0.3, boost: nil) }),
            try await LatencyFigures.measure("floor: raw FTS5 MATCH, bm25, LIMIT 20", samples: samples) { try store.unsafeRawFullText(table: "places", query: .typeAhead(queries[$0]), limit: 20) },
            try await LatencyFigures.measure("nearby_places (RPC, anon, 5 km, top 20)", samples: samples) {
                try await rpcRowCount(nearby, nearbyArguments[$0 % nearbyArguments.count], store: store, access: anon)
            },
            try await LatencyFigures.measure("floor: raw R*Tree box, 5 km", samples: samples) {
                try store.unsafeRawGeoBox(table: "places", latitude: points[$0 % points.count].0, longitude: points[$0 % points.count].1, radius: 5000)
            },
        ]
    }

    func report(_ figures: [LatencyFigures], places total: Int) {
        if json {
            writeStandardOutput(JSONValue.object([
                ("places", .integer(Int64(total))), ("samples", .integer(Int64(samples))),
                ("figures", .array(figures.map { .object([("name", .string($0.name)), ("p50_us", .double($0.percentile(50).rounded())),
                                                          ("p95_us", .double($0.percentile(95).rounded())), ("mean_results", .double($0.meanRows))]) })),
            ]).jsonText + "\n")
        } else {
            writeStandardOutput("\(total) places, \(samples) questions each\n")
            for figure in figures {
                writeStandardOutput("\(figure.name.padding(toLength: 42, withPad: " ", startingAt: 0)) p50 \(String(format: "%8.1f", figure.percentile(50))) µs  p95 \(String(format: "%8.1f", figure.percentile(95))) µs  mean rows \(String(format: "%.1f", figure.meanRows))\n")
            }
        }
    }
}

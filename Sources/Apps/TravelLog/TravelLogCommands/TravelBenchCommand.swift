import ArgumentParser
import CaravanCLI
import CaravanCore
import CaravanDeployment
import Foundation
import TravelLog

/// `caravan bench travel-search`: p50/p99 of `search_cities` called in-process as anon (in the RPC's transaction,
/// as REST does), on either engine, over type-ahead questions drawn from the cities themselves.
struct BenchTravelSearch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "travel-search", abstract: "Time search_cities in-process.")
    @OptionGroup var data: DataOptions
    @Option(help: "Questions per measurement.") var samples = 1000
    @Option(help: "Seed of the question sample.") var seed: UInt64 = 7
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let configuration = try data.resolve()
        let deployment = try await openDeployment(configuration, logger: makeLogger(level: "warning"))
        let store = deployment.store
        let catalog = try deploymentCatalog(configuration)
        let anon = catalog.access(for: Identity(role: .anon))
        let names = try await store.fetch(try ReadPlan(
            table: TravelLogSchema.cities,
            query: Query(select: [.column(name: "display_name", alias: nil, cast: nil), .column(name: "name_ar", alias: nil, cast: nil)]),
            access: .constant(true), maxRows: nil, includeCount: false)).rows
        guard !names.isEmpty else { throw ValidationError("no cities: run caravan import world first") }
        var random = SplitMix64(state: seed)
        let questions: [String] = (0..<samples).map { index in
            let row = names[Int.random(in: 0..<names.count, using: &random)]
            let name: String = if index % 4 == 3, case .text(let arabic) = row[1] { arabic } else if case .text(let latin) = row[0] { latin } else { "a" }
            let tokens = TextFolding.tokens(in: name)
            // Type-ahead: 1–6 characters of the name, or a whole first word and the start of the next.
            if index % 5 == 4, tokens.count >= 2 { return "\(tokens[0]) \(tokens[1].prefix(2))" }
            return String(name.prefix(1 + index % 6))
        }
        let search = try catalog.requireFunction("search_cities")
        let arguments = try questions.map { try search.bind(["q": .string($0)]) }
        let figures = try await LatencyFigures.measure("search_cities", samples: samples, warmUp: 50) {
            try await rpcRowCount(search, arguments[$0], store: store, access: anon)
        }
        let p50 = figures.percentile(50) / 1000, p99 = figures.percentile(99) / 1000, meanRows = figures.meanRows
        await deployment.close()
        if json {
            writeStandardOutput(JSONValue.object([("cities", .integer(Int64(names.count))), ("samples", .integer(Int64(samples))),
                                                  ("p50_ms", .double(p50)), ("p99_ms", .double(p99)),
                                                  ("mean_rows", .double(meanRows))]).jsonText + "\n")
        } else {
            writeStandardOutput("\(names.count) cities, \(samples) questions: search_cities p50 \(String(format: "%.3f", p50)) ms, p99 \(String(format: "%.3f", p99)) ms, mean rows \(String(format: "%.1f", meanRows))\n")
        }
    }
}

import ArgumentParser
import CaravanCLI
import CaravanCore
import CaravanDeployment
import Foundation
import TravelLog

/// `caravan import world --countries FILE --cities FILE`: the TravelLog reference data (GeoNames countries and
/// cities), upserted by id through the write pipeline; countries first; every rejected row reported.
struct ImportWorld: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "world", abstract: "Import GeoNames countries and cities for the travel_log app (upsert by id).")
    @OptionGroup var data: DataOptions
    @Option(help: "The countries CSV (iso2,iso3,iso_numeric,name,name_ar,capital,continent_code,continent,population,…,geonameid).")
    var countries: String
    @Option(help: "The cities CSV (geonameid,name,name_ar,country_code,country_name,admin1_code,admin1_name,…,population,latitude,longitude,…).")
    var cities: String
    @Flag(help: "Print the summary as JSON.") var json = false
    @Option(name: .customLong("batch-size"), help: "Rows per transaction (default 1000).") var batchSize = 1000

    func run() async throws {
        let configuration = try data.resolve()
        let logger = makeLogger(level: "warning")
        let countriesCSV = try Self.read(countries)
        let citiesCSV = try Self.read(cities)
        let bar = ProgressBar()
        let batchSize = max(1, self.batchSize)
        let summary = try await withDeployment(configuration, logger: logger) { deployment in
            let pipeline = WritePipeline(store: deployment.store, publisher: ChangePublisher())
            let access = Catalog(modules: [SystemModule.module, TravelLogModule.module]).access(for: .serviceRole)
            return try await WorldImporter(pipeline: pipeline, access: access, batchSize: batchSize)
                .run(countriesCSV: countriesCSV, citiesCSV: citiesCSV) { bar.draw(done: $0, total: $1) }
        }
        if json {
            writeStandardOutput(Self.summaryJSON(summary).jsonText + "\n")
            return
        }
        for rejection in summary.rejections {
            writeStandardOutput("rejected \(rejection.file) line \(rejection.line)\(rejection.id.map { " (id \($0))" } ?? ""): \(rejection.field): \(rejection.reason)\n")
        }
        for (name, counts) in [("countries", summary.countries), ("cities", summary.cities)] {
            writeStandardOutput("\(name): \(counts.total) rows: \(counts.inserted) inserted, \(counts.updated) updated\n")
        }
        writeStandardOutput("\(summary.rejections.count) rejected\n")
    }

    static func read(_ path: String) throws -> String {
        guard let contents = FileManager.default.contents(atPath: path) else { throw ValidationError("cannot read \(path)") }
        guard let text = String(bytes: contents, encoding: .utf8) else { throw ValidationError("\(path) is not UTF-8 text") }
        return text
    }

    static func summaryJSON(_ summary: WorldImporter.Summary) -> JSONValue {
        func counts(_ counts: WorldImporter.Counts) -> JSONValue {
            .object([("total", .integer(Int64(counts.total))), ("inserted", .integer(Int64(counts.inserted))),
                     ("updated", .integer(Int64(counts.updated)))])
        }
        let rejections = summary.rejections.map { rejection in
            JSONValue.object([
                ("file", .string(rejection.file)), ("line", .integer(Int64(rejection.line))),
                ("id", rejection.id.map(JSONValue.string) ?? .null), ("field", .string(rejection.field)),
                ("reason", .string(rejection.reason)),
            ])
        }
        return .object([("countries", counts(summary.countries)), ("cities", counts(summary.cities)),
                        ("rejected", .integer(Int64(summary.rejections.count))), ("rejections", .array(rejections))])
    }
}

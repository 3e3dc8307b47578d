import ArgumentParser
import CaravanCLI
import CaravanCore
import CaravanDeployment
import CaravanSQLite
import Foundation
import Places

struct ImportPlaces: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "places", abstract: "Import a places.json file (upsert by id).")
    @OptionGroup var data: DataOptions
    @Argument(help: "The places.json file.") var file: String
    @Flag(name: .customLong("dry-run"), help: "Validate every row; write nothing.") var dryRun = false
    @Flag(help: "Print the summary as JSON.") var json = false
    @Option(name: .customLong("batch-size"), help: "Rows per transaction (default 500).") var batchSize = 500
    @Option(help: "A districts CSV (district_id,name_ar,name_en) for the areas table (default: districts.csv beside FILE, if any).")
    var districts: String?

    func run() async throws {
        let configuration = try data.resolve()
        let entries = try PlacesFile.entries(at: file)
        let bar = ProgressBar()
        let batchSize = max(1, self.batchSize)
        let dryRun = self.dryRun
        let (summary, reference) = try await withDeployment(configuration, logger: makeLogger(level: "warning")) { deployment in
            let pipeline = WritePipeline(store: deployment.store, publisher: ChangePublisher())
            let importer = PlacesImporter(pipeline: pipeline, access: Catalog(modules: [SystemModule.module, PlacesModule.module]).access(for: .serviceRole), batchSize: batchSize)
            let summary = try await importer.run(entries, dryRun: dryRun) { bar.draw(done: $0, total: $1) }
            let reference = dryRun ? nil : try await self.syncReferenceData(pipeline: pipeline)
            return (summary, reference)
        }
        if json {
            writeStandardOutput(Self.summaryJSON(summary, reference: reference, dryRun: dryRun).jsonText + "\n")
        } else {
            report(summary, reference: reference)
        }
    }

    static func summaryJSON(_ summary: PlacesImporter.Summary, reference: PlacesReferenceData.Summary?, dryRun: Bool) -> JSONValue {
        let rejections = summary.rejections.map { rejection in
            JSONValue.object([
                ("index", .integer(Int64(rejection.index))),
                ("id", rejection.id.map(JSONValue.string) ?? .null),
                ("field", .string(rejection.field)),
                ("reason", .string(rejection.reason)),
            ])
        }
        return .object([
            ("total", .integer(Int64(summary.total))),
            ("inserted", .integer(Int64(summary.inserted))),
            ("updated", .integer(Int64(summary.updated))),
            ("rejected", .integer(Int64(summary.rejections.count))),
            ("valid", .integer(Int64(summary.valid))),
            ("dry_run", .bool(dryRun)),
            ("rejections", .array(rejections)),
            ("areas", .integer(Int64(reference?.areas ?? 0))),
            ("categories", .integer(Int64(reference?.categories ?? 0))),
        ])
    }

    func report(_ summary: PlacesImporter.Summary, reference: PlacesReferenceData.Summary?) {
        for rejection in summary.rejections {
            writeStandardOutput("rejected row \(rejection.index)\(rejection.id.map { " (id \($0))" } ?? ""): \(rejection.field): \(rejection.reason)\n")
        }
        if dryRun {
            writeStandardOutput("dry run: \(summary.total) rows, \(summary.valid) valid, \(summary.rejections.count) rejected; nothing written\n")
            return
        }
        writeStandardOutput("\(summary.total) rows: \(summary.inserted) inserted, \(summary.updated) updated, \(summary.rejections.count) rejected\n")
        if let reference {
            for problem in reference.rejectedAreas { writeStandardOutput("rejected district: \(problem)\n") }
            writeStandardOutput("\(reference.areas) areas, \(reference.categories) categories (\(reference.newCategories) new), places counts refreshed\n")
        }
    }
}

extension ImportPlaces {
    /// Loads the districts into `areas` and keeps `categories` and the counts in step with the imported places.
    func syncReferenceData(pipeline: WritePipeline) async throws -> PlacesReferenceData.Summary {
        let sibling = ((file as NSString).deletingLastPathComponent as NSString).appendingPathComponent("districts.csv")
        let path = districts ?? (FileManager.default.fileExists(atPath: sibling) ? sibling : nil)
        var csv: String?
        if let path {
            guard let contents = FileManager.default.contents(atPath: path) else { throw ValidationError("cannot read \(path)") }
            csv = String(decoding: contents, as: UTF8.self)
        }
        return try await PlacesReferenceData(pipeline: pipeline, access: Catalog(modules: [SystemModule.module, PlacesModule.module]).access(for: .serviceRole)).sync(districtsCSV: csv)
    }
}

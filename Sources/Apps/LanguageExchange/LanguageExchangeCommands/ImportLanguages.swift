import ArgumentParser
package import CaravanCLI
import CaravanCore
import CaravanDeployment
import Foundation
import LanguageExchange

/// The language-exchange app's commands in a `caravan` binary: `caravan import languages`, `caravan import tatoeba`,
/// `caravan bench generate-profiles`, `caravan bench language-matches`, `caravan bench swipes`, `caravan bench messages`.
package enum LanguageExchangeCommands {
    package static let commands = AppCommands(imports: [ImportLanguages.self, ImportTatoeba.self],
                                             benches: [GenerateProfiles.self, BenchLanguageMatches.self, BenchSwipes.self, BenchMessages.self])
}

/// `caravan import languages FILE`: the LanguageExchange `languages` reference table from
/// `iso639_3_languages.csv`, upserted by canonical code through the write pipeline; rejected records reported.
struct ImportLanguages: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "languages",
                                                    abstract: "Import ISO 639-3 languages for the language_exchange app (upsert by canonical code).")
    @OptionGroup var data: DataOptions
    @Argument(help: "The CSV (iso639_3,iso639_1,iso639_2b,iso_name,cldr_name_en,name_ar,native_name,scope,type).") var file: String

    func run() async throws {
        let configuration = try data.resolve()
        let catalog = try deploymentCatalog(configuration)
        guard catalog.table(named: LanguageExchangeSchema.languages.name) != nil else {
            throw ValidationError("the deployment does not serve language_exchange: add it with --apps")
        }
        guard let contents = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
        let csv = String(decoding: contents, as: UTF8.self)
        let summary = try await withDeployment(configuration, logger: makeLogger(level: "warning")) { deployment in
            try await WritePipeline(store: deployment.store, publisher: ChangePublisher()).run(catalog.access(for: .serviceRole)) { tx in
                try await LanguageImporter.load(csv: csv, in: tx)
            }
        }
        for rejection in summary.rejections {
            writeStandardOutput("rejected line \(rejection.line): \(rejection.field): \(rejection.reason)\n")
        }
        writeStandardOutput("languages: \(summary.imported) imported, \(summary.rejections.count) rejected\n")
    }
}

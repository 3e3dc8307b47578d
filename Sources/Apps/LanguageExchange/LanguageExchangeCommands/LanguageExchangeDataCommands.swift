import ArgumentParser
import CaravanCLI
import CaravanCore
import CaravanDeployment
import Foundation
import LanguageExchange

/// `catalog` (a deployment's), refused when it does not serve language_exchange.
func languageExchange(_ catalog: Catalog) throws -> Catalog {
    guard catalog.table(named: LanguageExchangeSchema.profiles.name) != nil else {
        throw ValidationError("the deployment does not serve language_exchange: add it with --apps")
    }
    return catalog
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// `caravan bench generate-profiles N --seed S`: N deterministic LanguageExchange users (see `ProfileGenerator`),
/// upserted through the write pipeline in batches.
struct GenerateProfiles: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "generate-profiles",
                                                    abstract: "Add N generated language-exchange profiles (deterministic for a seed and --as-of).")
    @OptionGroup var data: DataOptions
    @Argument(help: "How many profiles.") var count: Int
    @Option(help: "The generator's seed.") var seed: UInt64 = 1
    @Option(name: .customLong("as-of"), help: "last_active lies in the 60 days before this ISO 8601 instant (default: now).") var asOf: String?
    @Option(name: .customLong("batch-size"), help: "Profiles per transaction.") var batchSize = 1000

    func run() async throws {
        guard count > 0 else { throw ValidationError("N must be positive") }
        let anchor: Int64
        if let asOf {
            guard let parsed = Timestamp.parseMicroseconds(asOf) else { throw ValidationError("--as-of \(asOf) is not an ISO 8601 instant") }
            anchor = parsed
        } else {
            anchor = Int64(Date().timeIntervalSince1970 * 1_000_000)
        }
        let configuration = try data.resolve()
        let access = try languageExchange(try deploymentCatalog(configuration)).access(for: .serviceRole)
        let (count, seed, batchSize) = (count, seed, max(1, batchSize))
        let elapsed = try await withDeployment(configuration, logger: makeLogger(level: "warning")) { deployment in
            let pipeline = WritePipeline(store: deployment.store, publisher: ChangePublisher())
            let generator = try await pipeline.run(access) { tx in try await ProfileGenerator.load(seed: seed, anchor: anchor, in: tx) }
            let started = ContinuousClock.now
            var start = 0
            while start < count {
                let range = start..<min(count, start + batchSize)
                _ = try await pipeline.run(access) { tx in try await generator.write(range, in: tx) }
                start = range.upperBound
                if isatty(STDERR_FILENO) == 1 { writeStandardError("\r\(start)/\(count)") }
            }
            if isatty(STDERR_FILENO) == 1 { writeStandardError("\n") }
            return ContinuousClock.now - started
        }
        writeStandardOutput("\(count) generated profiles (seed \(seed), as of \(Timestamp.format(microseconds: anchor))) in "
            + String(format: "%.1f s", seconds(elapsed)) + "\n")
    }
}

/// `caravan import tatoeba FILE`: Tatoeba English–Arabic pairs as a demo conversation and a warm translation cache
/// (see `TatoebaImporter`).
struct ImportTatoeba: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tatoeba",
                                                    abstract: "Import Tatoeba English<TAB>Arabic pairs as demo messages and a warm translation cache.")
    @OptionGroup var data: DataOptions
    @Argument(help: "The TSV (English<TAB>Arabic<TAB>attribution), e.g. tatoeba_ara_eng.tsv.") var file: String
    @Option(help: "The translation provider the cache rows are for (default CARAVAN_TRANSLATION_PROVIDER, else openai).") var provider: String?

    func run() async throws {
        let configuration = try data.resolve()
        let access = try languageExchange(try deploymentCatalog(configuration)).access(for: .serviceRole)
        guard let contents = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
        let (pairs, rejections) = TatoebaImporter.pairs(fromTSV: String(decoding: contents, as: UTF8.self))
        let provider = self.provider ?? ProcessInfo.processInfo.environment["CARAVAN_TRANSLATION_PROVIDER"].flatMap { $0.isEmpty ? nil : $0 } ?? "openai"
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        let summary = try await withDeployment(configuration, logger: makeLogger(level: "warning")) { deployment in
            try await WritePipeline(store: deployment.store, publisher: ChangePublisher()).run(access) { tx in
                try await TatoebaImporter.load(pairs, provider: provider, now: now, in: tx)
            }
        }
        for rejection in rejections { writeStandardOutput("rejected line \(rejection.line): \(rejection.reason)\n") }
        writeStandardOutput("\(summary.pairs) pairs, \(rejections.count) rejected: \(summary.messagesInserted) messages inserted in conversation "
            + "\(summary.conversationID) (Sam \(TatoebaImporter.sam), Amal \(TatoebaImporter.amal)); translation cache (\(provider)): "
            + "\(summary.cacheInsertedEnglishToArabic) en→ar, \(summary.cacheInsertedArabicToEnglish) ar→en inserted\n")
    }
}

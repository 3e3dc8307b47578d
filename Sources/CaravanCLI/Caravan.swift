import ArgumentParser
import CaravanAuth
public import CaravanCore
import CaravanDeployment
import CaravanPostgres
import CaravanRealtime
import CaravanServer
import CaravanSQLite
import CaravanSync
import ServiceLifecycle
import Foundation
import Logging
import NIOCore
import NIOPosix
import Places
import ServiceLifecycle
import Transit
import TransitSQLite

/// The Caravan command line as a library: a binary of your own runs it with its own app modules (see
/// `Examples/Notes`); the `caravan` binary runs it with the apps that ship.
public enum CaravanCommandLine {
    /// The app modules of this binary: what `--apps` chooses from.
    @TaskLocal static var apps: [AppModule] = []
    /// The names of the apps served without `--apps`; nil: every app of the binary.
    @TaskLocal static var defaultApps: [String]? = nil

    /// Parses the process's arguments, runs the command with `apps` as the binary's app modules, and exits with the
    /// command's status. Without `--apps`, a deployment serves `defaultApps` (every app when nil): apps that declare
    /// a table of the same name (LanguageExchange's and GroupDecisions' `profiles`) cannot both be served by default.
    public static func main(apps: [AppModule], defaultApps: [String]? = nil) async -> Never {
        await $apps.withValue(apps) {
            await $defaultApps.withValue(defaultApps) {
                await Caravan.main()  // exits by itself with the right status on a parse or run error
            }
        }
        exit(0)
    }
}

/// `caravan`: the command line. It parses flags, builds the pieces, and hands over; no logic lives here.
struct Caravan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "caravan",
        abstract: "A self-hostable backend and offline-first data layer for Swift apps.",
        subcommands: [Serve.self, Migrate.self, MigrationsCommand.self, Import.self, Keys.self, UserCommand.self, Copy.self, Backup.self, Restore.self, ExportCommand.self, ChangesCommand.self, TransitCommand.self, DecisionsCommand.self, Bench.self]
    )
}

/// Options every data subcommand shares.
struct DataOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "The data directory (default ./caravan-data, or CARAVAN_DATA_DIR).")
    var dataDirectory: String?

    @Option(name: .customLong("config"), help: "A JSON config file (or CARAVAN_CONFIG).")
    var configFile: String?

    @Option(name: .customLong("database"), help: "A postgres:// URL: the deployment lives in that PostgreSQL database instead of the data directory (or CARAVAN_DATABASE_URL).")
    var databaseURL: String?

    @Option(name: .customLong("apps"), help: "The app modules to serve, comma-separated (default: \(defaultServedApps.map(\.name).joined(separator: ","))), or CARAVAN_APPS.")
    var apps: String?

    func resolve(extraFlags: [String: String] = [:]) throws -> ServerConfiguration {
        let environment = ProcessInfo.processInfo.environment
        var file: [String: String] = [:]
        if let path = configFile ?? environment["CARAVAN_CONFIG"] {
            file = try ServerConfiguration.readFile(at: path)
        }
        var flags = extraFlags
        if let dataDirectory { flags["data_dir"] = dataDirectory }
        if let databaseURL { flags["database_url"] = databaseURL }
        if let apps { flags["apps"] = apps }
        return try ServerConfiguration.resolve(flags: flags, environment: environment, file: file)
    }
}

/// The app modules of this binary (`--apps` chooses among them). Transit is served from its own bundle
/// (`--transit`), not from the deployment's database.
var shippedApps: [AppModule] { CaravanCommandLine.apps }

/// The apps a deployment serves without `--apps`: the binary's default list, else every app it ships.
var defaultServedApps: [AppModule] {
    guard let names = CaravanCommandLine.defaultApps else { return shippedApps }
    return shippedApps.filter { names.contains($0.name) }
}

/// The catalog of a deployment: the system tables, auth, and the apps of `apps` (default: every app that ships).
/// An unknown app name, or two apps declaring one table, is refused with an error naming them.
func deploymentCatalog(_ configuration: ServerConfiguration) throws -> Catalog {
    var selected = defaultServedApps
    if let names = configuration.apps {
        selected = try names.map { name in
            guard let app = shippedApps.first(where: { $0.name == name }) else {
                throw CaravanError(.invalidConfiguration,
                                   "unknown app \(name): the apps of this binary are \(shippedApps.map(\.name).joined(separator: ", "))")
            }
            return app
        }
    }
    return try Catalog.validated(modules: [SystemModule.module, AuthModule.module] + selected)
}

func epochSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }

func epochMicroseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }

/// The auth service of a deployment on the system clock and random ids; codes go to `sender` (the development
/// outbox unless given: `caravan serve` passes its running `SMTPSender` when SMTP is configured).
func makeAuthService(configuration: ServerConfiguration, store: any Store, catalog: Catalog, pipeline: WritePipeline,
                     secret: SigningSecret, verifier: TokenVerifier, sender: (any MessageSender)? = nil,
                     logger: Logger) async throws -> AuthService {
    let sender = sender ?? OutboxSender(pipeline: pipeline, catalog: catalog, logger: logger, clock: .system)
    return try await AuthService(store: store, pipeline: pipeline, catalog: catalog, secret: secret, verifier: verifier,
                                 configuration: configuration.auth, baseURL: configuration.baseURL, sender: sender,
                                 threadPool: .singleton, logger: logger, clock: .system, ids: .random)
}

/// Opens the deployment's store — the PostgreSQL database of `database_url`, else the data directory's SQLite
/// file — applies pending migrations, lends it to `body`, and closes it (the Postgres pool stops) before returning.
func withDeployment<T: Sendable>(_ configuration: ServerConfiguration, logger: Logger, _ body: (Deployment) async throws -> T) async throws -> T {
    let location = try DeploymentLocation.resolve(dataDirectory: configuration.dataDirectory, databaseURL: configuration.databaseURL)
    return try await Deployment.withOpened(location, migrations: try deploymentCatalog(configuration).migrations, logger: logger, body)
}

/// Opens the deployment for a command that closes it itself (`close()`) when done.
func openDeployment(_ configuration: ServerConfiguration, logger: Logger) async throws -> Deployment {
    let location = try DeploymentLocation.resolve(dataDirectory: configuration.dataDirectory, databaseURL: configuration.databaseURL)
    return try await Deployment.open(location, migrations: try deploymentCatalog(configuration).migrations, logger: logger)
}

func makeLogger(level: String) -> Logger {
    var logger = Logger(label: "caravan")
    logger.logLevel = Logger.Level(rawValue: level) ?? .info
    return logger
}

func writeStandardError(_ text: String) {
    FileHandle.standardError.write(Data(text.utf8))
}

func writeStandardOutput(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}

/// The change log of a deployment's store, for the realtime feed: any engine, through the storage port.
struct StoreChangeLog: ChangeLogSource {
    let store: any Store

    func changes(after seq: Int64, limit: Int) async throws -> [Change] { try await store.changes(after: seq, limit: limit) }
    func latestChangeSeq() async throws -> Int64 { try await store.changeLogState().head }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending migrations and list every applied one.")
    @OptionGroup var data: DataOptions

    func run() async throws {
        let configuration = try data.resolve()
        let applied = try await withDeployment(configuration, logger: makeLogger(level: "warning")) { deployment in
            try await deployment.store.appliedMigrations()
        }
        for id in applied { writeStandardOutput(id + "\n") }
    }
}

struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the anon and service_role API keys.", subcommands: [KeysBench.self])
    @OptionGroup var data: DataOptions
    @Flag(help: "Print {\"anon_key\": …, \"service_role_key\": …}.") var json = false

    func run() async throws {
        let configuration = try data.resolve()
        let secret = try await withDeployment(configuration, logger: makeLogger(level: "warning")) { deployment in
            try await deployment.signingSecret(now: epochSeconds())
        }
        let keys = try await TokenVerifier(secret: secret, now: epochSeconds).apiKeys()
        if json {
            writeStandardOutput(JSONValue.object([("anon_key", .string(keys.anonKey)), ("service_role_key", .string(keys.serviceRoleKey))]).jsonText + "\n")
        } else {
            writeStandardOutput("anon_key: \(keys.anonKey)\nservice_role_key: \(keys.serviceRoleKey)\n")
        }
    }
}

/// `caravan keys bench`: the token-verification timing harness of BENCHMARKS.md (hidden).
struct KeysBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench", abstract: "Time access-token verification, uncached and cached.",
                                                    shouldDisplay: false)
    @Option(help: "Tokens to verify.") var samples = 20_000

    func run() async throws {
        var generator = SystemRandomNumberGenerator()
        let secret = try SigningSecret(bytes: (0..<48).map { _ in UInt8.random(in: .min ... .max, using: &generator) }, createdAt: epochSeconds())
        let report = try await TokenBenchmark.run(secret: secret, samples: max(1, samples), now: epochSeconds())
        writeStandardOutput(report.jsonValue.jsonText + "\n")
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

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Import data into a deployment.", subcommands: [ImportPlaces.self, ImportGTFS.self, ImportWorld.self, ImportRestaurants.self, ImportLanguages.self])
}

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
        let entries = try readPlacesEntries(file)
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

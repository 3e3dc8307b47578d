public import ArgumentParser
import CaravanAuth
public import CaravanCore
package import CaravanDeployment
import CaravanHost
import CaravanPostgres
import CaravanRealtime
package import CaravanServer
import CaravanSQLite
import CaravanStorage
import CaravanSync
import ServiceLifecycle
import Foundation
package import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The Caravan command line as a library: a binary of your own runs it with its own app modules (see
/// `Examples/Notes`); the `caravan` binary runs it with the apps that ship.
public enum CaravanCommandLine {
    /// The app modules of this binary: what `--apps` chooses from, and every one of them by default.
    @TaskLocal static var apps: [AppModule] = []
    /// The apps' own commands, beside the platform's.
    @TaskLocal static var commands = AppCommands()

    /// Parses the process's arguments, runs the command with `apps` as the binary's app modules and `commands` among
    /// its subcommands, and exits with the command's status.
    /// A fatal signal is reported on standard error before the process ends (`FatalSignalReporter`).
    public static func main(apps: [AppModule], commands: [AppCommands] = []) async -> Never {
        FatalSignalReporter.install()
        await $apps.withValue(apps) {
            await $commands.withValue(AppCommands(merging: commands)) {
                await CommandLineErrors.main()  // exits with the command's status; errors become one line
            }
        }
        exit(0)
    }
}

/// What an app adds to the command line, kept beside the app (`Sources/Apps/<App>/<App>Commands`): commands of its own
/// (`caravan decisions …`), importers (`caravan import …`), benchmarks (`caravan bench …`) and, for an app served
/// from a file of its own rather than the deployment's database, how `caravan serve --bundle NAME=PATH` opens it.
public struct AppCommands: Sendable {
    public let top: [any ParsableCommand.Type]
    public let imports: [any ParsableCommand.Type]
    public let benches: [any ParsableCommand.Type]
    public let bundles: [AppBundle]

    public init(top: [any ParsableCommand.Type] = [], imports: [any ParsableCommand.Type] = [], benches: [any ParsableCommand.Type] = [],
                bundles: [AppBundle] = []) {
        self.top = top
        self.imports = imports
        self.benches = benches
        self.bundles = bundles
    }

    /// Every app's commands, in order.
    public init(merging all: [AppCommands]) {
        self.init(top: all.flatMap(\.top), imports: all.flatMap(\.imports), benches: all.flatMap(\.benches), bundles: all.flatMap(\.bundles))
    }
}

/// An app whose data is a read-only file of its own (transit's GTFS bundle), served beside the deployment's apps by
/// `caravan serve --bundle NAME=PATH`: `open` reads the file and returns the module answering its RPCs.
public struct AppBundle: Sendable {
    public let name: String
    public let open: @Sendable (_ path: String) throws -> AppModule

    public init(name: String, open: @escaping @Sendable (_ path: String) throws -> AppModule) {
        self.name = name
        self.open = open
    }
}

/// One `--bundle NAME=PATH` of `caravan serve`, checked against the binary's bundled apps.
struct BundledApp: Sendable {
    let bundle: AppBundle
    let path: String

    init(argument: String) throws {
        let known = CaravanCommandLine.commands.bundles
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex, argument.index(after: equals) != argument.endIndex else {
            throw ValidationError("--bundle takes NAME=PATH, got \(argument)")
        }
        let name = String(argument[..<equals])
        guard let bundle = known.first(where: { $0.name == name }) else {
            throw ValidationError("--bundle \(name): no bundled app of that name (this binary has: \(bundleHelp))")
        }
        self.bundle = bundle
        path = String(argument[argument.index(after: equals)...])
    }

    func open() throws -> AppModule { try bundle.open(path) }
}

/// The bundled apps of this binary, for help and errors.
var bundleHelp: String {
    let names = CaravanCommandLine.commands.bundles.map(\.name)
    return names.isEmpty ? "none" : names.joined(separator: ", ")
}

/// `caravan`: the command line. It parses flags, builds the pieces, and hands over; no logic lives here.
struct Caravan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "caravan",
        abstract: "A self-hostable backend and offline-first data layer for Swift apps.",
        version: CaravanVersion.description,
        subcommands: [Serve.self, Migrate.self, MigrationsCommand.self, Import.self, Keys.self, UserCommand.self, Copy.self, Backup.self, Restore.self,
                      ExportCommand.self, ChangesCommand.self, GenCommand.self, NewCommand.self, Bench.self] + CaravanCommandLine.commands.top
    )
}

/// Options every data subcommand shares.
package struct DataOptions: ParsableArguments {
    package init() {}

    @Option(name: .customLong("data-dir"), help: "The data directory (default ./caravan-data, or CARAVAN_DATA_DIR).")
    var dataDirectory: String?

    @Option(name: .customLong("config"), help: "A JSON config file (or CARAVAN_CONFIG).")
    var configFile: String?

    @Option(name: .customLong("database"), help: "A postgres:// URL: the deployment lives in that PostgreSQL database instead of the data directory (or CARAVAN_DATABASE_URL).")
    var databaseURL: String?

    @Option(name: .customLong("apps"), help: "The app modules to serve, comma-separated (default every app that ships: \(shippedApps.map(\.name).joined(separator: ","))), or CARAVAN_APPS.")
    var apps: String?

    package func resolve(extraFlags: [String: String] = [:]) throws -> ServerConfiguration {
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

/// The catalog of a deployment: the system tables, auth, storage and the apps of `apps` (default: every app that
/// ships). An unknown app name, or two apps declaring one table, is refused with an error naming them.
package func deploymentCatalog(_ configuration: ServerConfiguration) throws -> Catalog {
    try CaravanHost.catalog(apps: shippedApps, selecting: configuration.apps)
}

/// Opens the deployment's store — the PostgreSQL database of `database_url`, else the data directory's SQLite
/// file — applies pending migrations, lends it to `body`, and closes it (the Postgres pool stops) before returning.
/// Unless `creating`, a location that holds no deployment is refused, naming it (only `serve` and `migrate` create
/// one).
package func withDeployment<T: Sendable>(_ configuration: ServerConfiguration, logger: Logger, creating: Bool = false,
                                         _ body: (Deployment) async throws -> T) async throws -> T {
    try await openDeployment(configuration, logger: logger, creating: creating).lend(to: body)
}

/// Where `configuration` puts the deployment, with its pool settings.
package func deploymentLocation(_ configuration: ServerConfiguration) throws -> DeploymentLocation {
    try DeploymentLocation.resolve(dataDirectory: configuration.dataDirectory, databaseURL: configuration.databaseURL,
                                   poolSize: configuration.databasePool.size, acquireTimeout: configuration.databasePool.acquireTimeout,
                                   preparedStatements: configuration.databasePool.preparedStatements, listenURL: configuration.databasePool.listenURL,
                                   readReplicas: configuration.databasePool.readReplicas, readReplicaSettings: configuration.databasePool.readReplicaSettings)
}

/// Opens the deployment for a command that closes it itself (`close()`) when done. Unless `creating`, a location
/// holding no deployment is refused; a deployment created now is said on standard error.
package func openDeployment(_ configuration: ServerConfiguration, logger: Logger, creating: Bool = false) async throws -> Deployment {
    let location = try deploymentLocation(configuration)
    let (deployment, created) = try await Deployment.openReporting(location, migrations: try deploymentCatalog(configuration).migrations,
                                                                   logger: logger, creating: creating)
    if created { writeStandardError("caravan: created a new deployment in \(location.displayName)\n") }
    return deployment
}

package func makeLogger(level: String) -> Logger {
    var logger = Logger(label: "caravan") { label in DeferredFormattingLogHandler(label: label, stream: StandardErrorStream()) }
    logger.logLevel = Logger.Level(rawValue: level) ?? .info
    return logger
}

package func writeStandardError(_ text: String) {
    FileHandle.standardError.write(Data(text.utf8))
}

package func writeStandardOutput(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create the deployment if there is none, apply pending migrations and list every applied one.")
    @OptionGroup var data: DataOptions

    func run() async throws {
        let applied = try await withDeployment(try data.resolve(), logger: makeLogger(level: "warning"), creating: true) { deployment in
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

struct Import: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(abstract: "Import data into a deployment.", subcommands: CaravanCommandLine.commands.imports)
    }
}


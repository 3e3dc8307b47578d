import ArgumentParser
import CaravanHost
import CaravanPostgres
import CaravanServer
import Logging
import ServiceLifecycle
import UnixSignals

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server (REST on /rest/v1, auth on /auth/v1) on the embedded SQLite database or, with --database, on PostgreSQL.")

    @OptionGroup var data: DataOptions
    @Option(help: "Address to listen on (default 127.0.0.1).") var host: String?
    @Option(help: "Port to listen on (default 8080; 0 picks a free port).") var port: Int?
    @Option(name: .customLong("max-rows"), help: "Most rows one read returns; 0 for no cap (default 1000).") var maxRows: Int?
    @Flag(name: .customLong("aggregates-enabled"), help: "Allow aggregate functions in select= (count(), col.sum(), avg, min, max); default off (PGRST123).")
    var aggregatesEnabled = false
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.") var logLevel: String?
    @Option(name: .customLong("query-max-length"), help: "Longest query string, in bytes; longer is 414 (default 32768).") var queryMaxLength: Int?
    @Option(name: .customLong("query-max-filters"), help: "Most filter conditions per request; more is 400 PGRST100 (default 256).") var queryMaxFilters: Int?
    @Option(name: .customLong("query-max-embeds"), help: "Most embedded resources per request; more is 400 PGRST100 (default 32).") var queryMaxEmbeds: Int?
    @Option(name: .customLong("bundle"), help: ArgumentHelp("An app served from a file of its own, as NAME=PATH (repeatable): \(bundleHelp).", valueName: "name=path"))
    var bundles: [String] = []
    @Option(name: .customLong("read-replica"), help: ArgumentHelp("A postgres:// URL of a streaming standby of --database (repeatable): REST reads run there (or CARAVAN_READ_REPLICAS, comma-separated).", valueName: "url"))
    var readReplicas: [String] = []
    @Option(name: .customLong("listen-url"), help: ArgumentHelp("A postgres:// URL of --database reached directly, for the LISTEN connections (needed behind a pooler in transaction mode, db_pooler=transaction; or CARAVAN_LISTEN_URL).", valueName: "url"))
    var listenURL: String?

    /// Runs the host (`CaravanHost`) until SIGTERM or SIGINT, then shuts it down gracefully.
    func run() async throws {
        var flags: [String: String] = [:]
        if let host { flags["host"] = host }
        if let port { flags["port"] = String(port) }
        if let maxRows { flags["max_rows"] = String(maxRows) }
        if aggregatesEnabled { flags["aggregates_enabled"] = "true" }
        if let logLevel { flags["log_level"] = logLevel }
        if let queryMaxLength { flags["query_max_length"] = String(queryMaxLength) }
        if let queryMaxFilters { flags["query_max_filters"] = String(queryMaxFilters) }
        if let queryMaxEmbeds { flags["query_max_embeds"] = String(queryMaxEmbeds) }
        if let listenURL { flags["listen_url"] = listenURL }
        if !readReplicas.isEmpty { flags["read_replicas"] = readReplicas.joined(separator: ",") }
        let configuration = try data.resolve(extraFlags: flags)
        let logger = makeLogger(level: configuration.logLevel)
        let bundled = try bundles.map(BundledApp.init(argument:))
        let host = try CaravanHost(configuration: .init(configuration), apps: shippedApps, bundles: bundled.map { app in { try app.open() } },
                                   logger: logger)
        let group = ServiceGroup(configuration: .init(services: [host], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        let apps = (configuration.apps ?? shippedApps.map(\.name)) + bundled.map(\.bundle.name)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                // The banner, once listening; a server that fails first has nothing to announce.
                guard let serving = try? await host.serving() else { return }
                writeStandardOutput(Self.banner(serving: serving, configuration: configuration, apps: apps))
            }
            try await group.run()
            tasks.cancelAll()
        }
    }

    /// What a person starting the server needs: where the API and the console are, where the data lives (the
    /// database's name, host and port, never its URL, which may hold a password), the apps, and how to get the keys.
    static func banner(serving: CaravanHost.Serving, configuration: ServerConfiguration, apps: [String]) -> String {
        let data: String
        let keys: String
        if let url = configuration.databaseURL, let database = try? PostgresStoreConfiguration(url: url) {
            data = "database:  \(database.database) on \(database.hostsDescription) (PostgreSQL)"
            keys = "caravan keys --database URL"
        } else {
            data = "data:      \(configuration.dataDirectory) (SQLite)"
            keys = "caravan keys --data-dir \(configuration.dataDirectory)"
        }
        var lines = ["caravan serving",
                     "  API:       \(serving.baseURL)  (/rest/v1, /auth/v1, /storage/v1, /sync/v1, /realtime/v1)"]
        if configuration.adminConsole { lines.append("  console:   \(serving.baseURL)/admin") }
        lines += ["  \(data)" + (serving.createdDeployment ? "  (a new deployment, created now)" : ""),
                  "  apps:      \(apps.isEmpty ? "none" : apps.joined(separator: ", "))",
                  "  keys:      \(keys)"]
        return lines.joined(separator: "\n") + "\n"
    }
}

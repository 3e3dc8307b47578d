import ArgumentParser
import CaravanHost
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
        let configuration = try data.resolve(extraFlags: flags)
        let logger = makeLogger(level: configuration.logLevel)
        let bundled = try bundles.map(BundledApp.init(argument:))
        let host = try CaravanHost(configuration: .init(configuration), apps: shippedApps, bundles: bundled.map { app in { try app.open() } },
                                   logger: logger)
        let group = ServiceGroup(configuration: .init(services: [host], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

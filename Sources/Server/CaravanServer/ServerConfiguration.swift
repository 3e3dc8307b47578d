package import CaravanAuth
package import CaravanCore
package import CaravanRealtime
package import CaravanStorage
package import CaravanSync
import Foundation

/// The server's settings, read once at the edge. Precedence: flags > `CARAVAN_*` environment > config file > defaults.
///
/// Keys (file key / environment variable):
/// - `host` / `CARAVAN_HOST` (default `127.0.0.1`)
/// - `port` / `CARAVAN_PORT` (default `8080`)
/// - `data_dir` / `CARAVAN_DATA_DIR` (default `./caravan-data`)
/// - `database_url` / `CARAVAN_DATABASE_URL`: a `postgres://` URL; the deployment then lives in that PostgreSQL
///   database (signing secret included) instead of the data directory's SQLite file. It may hold a password: never logged.
/// - `max_rows` / `CARAVAN_MAX_ROWS`: cap on rows per read, `0` for none (default `1000`, as Supabase)
/// - `aggregates_enabled` / `CARAVAN_AGGREGATES_ENABLED`: allow aggregate functions in `select=` (`count()`,
///   `col.sum()`, `avg`, `min`, `max`), as PostgREST's `db-aggregates-enabled` (default false: PGRST123)
/// - `log_level` / `CARAVAN_LOG_LEVEL` (default `info`)
/// - `apps` / `CARAVAN_APPS`: the app modules the deployment serves, comma-separated (`places,transit`; default every
///   app that ships); their migrations run, their tables, policies and functions are served
/// - `trust_forwarded_for` / `CARAVAN_TRUST_FORWARDED_FOR`: take the client address for abuse limits from the first
///   `X-Forwarded-For` entry (only behind a reverse proxy that sets it; default false)
/// - `changes_retention` / `CARAVAN_CHANGES_RETENTION`: how long the change log and sync push verdicts are kept
///   (`30s`, `15m`, `12h`, `7d`; default `7d`); a sync cursor older than that must pull a new snapshot
/// - `changes_compaction_interval` / `CARAVAN_CHANGES_COMPACTION_INTERVAL`: time between compactions (default `1h`)
/// - `metrics_enabled` / `CARAVAN_METRICS_ENABLED`: record metrics and serve `GET /metrics` (default true)
/// - `metrics_public` / `CARAVAN_METRICS_PUBLIC`: serve `/metrics` without the service key (default false)
/// - `storage_max_file_size` / `CARAVAN_STORAGE_MAX_FILE_SIZE`: the largest object `/storage/v1` accepts, in bytes
///   (default 52428800, 50 MiB; a bucket's `file_size_limit` may be lower)
/// - image transformations (`/storage/v1/render/image`, when libvips is installed): `storage_image_max_source_size`
///   (bytes of the largest object rendered, default 26214400, 25 MiB), `storage_image_max_pixels` (width x height
///   of the largest source, default 40000000), `storage_image_cache_size` (bytes of renders kept in memory, default
///   67108864, 64 MiB; 0 for none)
/// - `admin_console` / `CARAVAN_ADMIN_CONSOLE`: serve the admin console at `/admin` and `/admin/api` (default true)
/// - request limits (`QueryLimits`): `query_max_length` (bytes of a query string, 32768; longer is 414),
///   `query_max_filters` (conditions per request, 256) and `query_max_embeds` (embedded resources per request, 32);
///   past the last two a request is 400 PGRST100
/// - connection limits (`ConnectionLimits`): `http_max_header_bytes`, `http_max_request_line_bytes`,
///   `http_idle_timeout`, `http_header_timeout`, `http_body_timeout`, `http_max_connections`
/// - the `auth_*` keys of `AuthConfiguration` (environment `CARAVAN_AUTH_*`)
/// - the PostgreSQL pool (`DatabasePoolSettings`): `db_pool_size` (20), `db_pool_acquire_timeout` (`10s`)
/// - realtime limits (`RealtimeLimits`): `realtime_max_sockets` (10000), `realtime_max_channels_per_socket` (100),
///   `realtime_joins_per_second` (20), `realtime_events_per_second` (100), `realtime_max_pending` (frames queued per
///   socket before the resync signal, 10000), `realtime_heartbeat_timeout` (s, 60), `realtime_stall_timeout` (s, 10)
/// The config file (JSON object) is named by `--config` or `CARAVAN_CONFIG`.
package struct ServerConfiguration: Sendable, Hashable {
    package var host = "127.0.0.1"
    package var port = 8080
    package var dataDirectory = "./caravan-data"
    /// The PostgreSQL deployment's URL, or nil for the data directory's SQLite file.
    package var databaseURL: String?
    package var maxRows: Int? = 1000
    /// Aggregate functions in `select=` are served (PostgREST's `db-aggregates-enabled`); off, they are PGRST123.
    package var aggregatesEnabled = false
    package var logLevel = "info"
    package var auth = AuthConfiguration()
    package var trustForwardedFor = false
    package var changeLogRetention = ChangeLogRetention()
    /// Record metrics and serve them at `GET /metrics`.
    package var metricsEnabled = true
    /// `/metrics` answers without the service key.
    package var metricsPublic = false
    /// Serve the admin console at `/admin` and its JSON API at `/admin/api` (service role only).
    package var adminConsole = true
    package var realtime = RealtimeLimits()
    /// The PostgreSQL connection pool (`db_pool_size`, `db_pool_acquire_timeout`).
    package var databasePool = DatabasePoolSettings()
    /// The names of the app modules to serve, in order; nil for every app that ships.
    package var apps: [String]?
    /// The largest object storage accepts, in bytes.
    package var storageMaxFileSize: Int64 = 50 * 1024 * 1024
    /// The bounds of image transformations (`storage_image_*`).
    package var imageLimits = ImageTransformLimits()
    /// How long a query string may be, and how many conditions and embedded resources one request may have.
    package var queryLimits = QueryLimits()
    /// Head sizes, timeouts and the connection cap of the HTTP server.
    package var connections = ConnectionLimits()

    package init() {}

    static let keys = ["host", "port", "data_dir", "database_url", "max_rows", "aggregates_enabled", "log_level", "trust_forwarded_for", "changes_retention", "changes_compaction_interval",
                       "metrics_enabled", "metrics_public", "admin_console", "apps", "storage_max_file_size",
                       "storage_image_max_source_size", "storage_image_max_pixels", "storage_image_cache_size",
                       "query_max_length", "query_max_filters", "query_max_embeds"] + AuthConfiguration.keys + RealtimeLimits.keys
        + ConnectionLimits.keys
        + DatabasePoolSettings.keys

    /// The URL clients reach the server at, when `auth_external_url` does not say.
    package var baseURL: String { "http://\(host):\(port)" }

    /// Resolves the configuration from its sources. `flags` and `file` use the file keys above.
    package static func resolve(flags: [String: String], environment: [String: String], file: [String: String]) throws(CaravanError) -> ServerConfiguration {
        func lookup(_ key: String) -> String? {
            flags[key] ?? environment["CARAVAN_" + key.uppercased()] ?? file[key]
        }
        var configuration = ServerConfiguration()
        if let host = lookup("host") { configuration.host = host }
        if let port = lookup("port") {
            guard let value = Int(port), (0...65535).contains(value) else {
                throw CaravanError(.invalidValue, "port must be an integer from 0 to 65535, got \"\(port)\"")
            }
            configuration.port = value
        }
        if let dataDirectory = lookup("data_dir") { configuration.dataDirectory = dataDirectory }
        if let apps = lookup("apps") {
            let names = apps.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !names.isEmpty else { throw CaravanError(.invalidValue, "apps must name at least one app, got \"\(apps)\"") }
            configuration.apps = names
        }
        if let databaseURL = lookup("database_url"), !databaseURL.isEmpty { configuration.databaseURL = databaseURL }
        if let maxRows = lookup("max_rows") {
            guard let value = Int(maxRows), value >= 0 else {
                throw CaravanError(.invalidValue, "max_rows must be a non-negative integer, got \"\(maxRows)\"")
            }
            configuration.maxRows = value == 0 ? nil : value
        }
        if let level = lookup("log_level") {
            guard ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(level) else {
                throw CaravanError(.invalidValue, "log_level must be one of trace, debug, info, notice, warning, error, critical")
            }
            configuration.logLevel = level
        }
        for (key, path) in [("trust_forwarded_for", \ServerConfiguration.trustForwardedFor), ("metrics_enabled", \ServerConfiguration.metricsEnabled),
                            ("metrics_public", \ServerConfiguration.metricsPublic), ("aggregates_enabled", \ServerConfiguration.aggregatesEnabled),
                            ("admin_console", \ServerConfiguration.adminConsole)] {
            guard let text = lookup(key) else { continue }
            guard ["true", "false"].contains(text) else { throw CaravanError(.invalidValue, "\(key) must be true or false") }
            configuration[keyPath: path] = text == "true"
        }
        for (key, path) in [("changes_retention", \ChangeLogRetention.window), ("changes_compaction_interval", \ChangeLogRetention.interval)] {
            guard let text = lookup(key) else { continue }
            guard let duration = ChangeLogRetention.parseDuration(text), key == "changes_retention" || duration > .zero else {
                throw CaravanError(.invalidValue, "\(key) must be a duration such as 30s, 15m, 12h or 7d, got \"\(text.prefix(32))\"")
            }
            configuration.changeLogRetention[keyPath: path] = duration
        }
        if let size = lookup("storage_max_file_size") {
            guard let bytes = Int64(size), bytes > 0 else {
                throw CaravanError(.invalidValue, "storage_max_file_size must be a positive number of bytes, got \"\(size.prefix(32))\"")
            }
            configuration.storageMaxFileSize = bytes
        }
        configuration.imageLimits = try resolveImageLimits(lookup)
        configuration.queryLimits = try resolveQueryLimits(lookup)
        configuration.connections = try ConnectionLimits.resolve(lookup, maxQueryLength: configuration.queryLimits.maxQueryLength)
        configuration.auth = try AuthConfiguration.resolve(lookup)
        configuration.realtime = try RealtimeLimits.resolve(lookup)
        configuration.realtime.filters = configuration.queryLimits
        configuration.databasePool = try DatabasePoolSettings.resolve(lookup)
        return configuration
    }

    /// The `storage_image_*` settings: byte and pixel counts.
    static func resolveImageLimits(_ lookup: (String) -> String?) throws(CaravanError) -> ImageTransformLimits {
        var limits = ImageTransformLimits()
        func number(_ key: String, minimum: Int64) throws(CaravanError) -> Int64? {
            guard let text = lookup(key) else { return nil }
            guard let value = Int64(text), value >= minimum else {
                throw CaravanError(.invalidValue, "\(key) must be an integer of at least \(minimum), got \"\(text.prefix(32))\"")
            }
            return value
        }
        if let bytes = try number("storage_image_max_source_size", minimum: 1) { limits.maxSourceBytes = bytes }
        if let pixels = try number("storage_image_max_pixels", minimum: 1) { limits.maxSourcePixels = pixels }
        if let bytes = try number("storage_image_cache_size", minimum: 0) { limits.cacheBytes = Int(clamping: bytes) }
        return limits
    }

    /// The `query_max_*` settings, each an integer within `QueryLimits.settingRanges`.
    static func resolveQueryLimits(_ lookup: (String) -> String?) throws(CaravanError) -> QueryLimits {
        var limits = QueryLimits()
        let ranges = QueryLimits.settingRanges
        for (key, range, path) in [("query_max_length", ranges.queryLength, \QueryLimits.maxQueryLength),
                                   ("query_max_filters", ranges.filters, \QueryLimits.maxFilters),
                                   ("query_max_embeds", ranges.embeds, \QueryLimits.maxEmbeds)] {
            guard let text = lookup(key) else { continue }
            guard let value = Int(text), range.contains(value) else {
                throw CaravanError(.invalidValue, "\(key) must be an integer from \(range.lowerBound) to \(range.upperBound), got \"\(text.prefix(32))\"")
            }
            limits[keyPath: path] = value
        }
        return limits
    }

    /// Reads a JSON config file into string settings; unknown keys are refused so typos do not pass silently.
    package static func readFile(at path: String) throws(CaravanError) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CaravanError(.invalidValue, "cannot read config file \(path)")
        }
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes: Array(data))
        } catch {
            throw CaravanError(.invalidValue, "config file \(path) is not valid JSON: \(error.details ?? error.message)")
        }
        guard case .object(let pairs) = document else {
            throw CaravanError(.invalidValue, "config file \(path) must hold a JSON object")
        }
        var settings: [String: String] = [:]
        for (key, value) in pairs {
            guard keys.contains(key) || OAuthConfiguration.isProviderKey(key) else {
                throw CaravanError(.invalidValue, "config file \(path): unknown key \"\(key)\"")
            }
            switch value {
            case .string(let s): settings[key] = s
            case .integer(let i): settings[key] = String(i)
            case .bool(let b): settings[key] = b ? "true" : "false"
            default: throw CaravanError(.invalidValue, "config file \(path): \"\(key)\" must be a string, an integer or a boolean")
            }
        }
        return settings
    }
}

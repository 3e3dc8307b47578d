package import CaravanCore
import CaravanSync
import Foundation

/// The PostgreSQL connection pool of a deployment (unused on SQLite), read once at the edge:
/// - `db_pool_size` / `CARAVAN_DB_POOL_SIZE`: connections at most (1…1000, default 20)
/// - `db_pool_acquire_timeout` / `CARAVAN_DB_POOL_ACQUIRE_TIMEOUT`: how long a request waits for a connection before
///   it is answered 503 (`30s`, `2m`; default `10s`, as PostgREST's `db-pool-acquisition-timeout`)
/// - `db_prepared_statements` / `CARAVAN_DB_PREPARED_STATEMENTS`: run statement shapes that repeat as named
///   prepared statements (`true`, the default; `false` behind a pooler that does not keep sessions)
/// - `db_pooler` / `CARAVAN_DB_POOLER`: `transaction` when `database_url` reaches PostgreSQL through a pooler in
///   transaction mode (PgBouncer `pool_mode = transaction`): no session state then outlives a transaction — no named
///   prepared statements — and `listen_url` is required; `none` (the default) for a direct connection
/// - `listen_url` / `CARAVAN_LISTEN_URL` (`caravan serve --listen-url`): a `postgres://` URL of the same database
///   reached directly, for the change listener's and the notification channel's `LISTEN` connections (default:
///   `database_url`)
/// - `read_replicas` / `CARAVAN_READ_REPLICAS` (`caravan serve --read-replica`, repeatable): `postgres://` URLs of
///   streaming standbys of the database, comma-separated; REST reads (`GET`/`HEAD`) run there (PostgreSQL only)
/// - `read_replica_max_lag` (`5s`): a replica whose replay is further behind is taken out until it catches up
/// - `read_replica_check_interval` (`1s`): how often every replica is checked
/// - `read_replica_token_wait` (`200ms`): how long a read carrying a consistency token waits for a replica to replay
///   it before the primary serves it
/// - `read_replica_consistency` (`caller`): what a REST read on a replica sees beyond its token — the caller's own
///   writes through this instance (`caller`), or every commit made before the read began (`strong`)
/// They are logged when the deployment opens (`database.pool_size`, `database.pool_acquire_timeout`,
/// `database.prepared_statements`).
package struct DatabasePoolSettings: Sendable, Hashable {
    package var size = 20
    package var acquireTimeout: Duration = .seconds(10)
    package var preparedStatements = true
    /// The pooler `database_url` goes through.
    package var pooler = Pooler.none
    /// Where the `LISTEN` connections go (never logged: it may hold a password); nil: `database_url`.
    package var listenURL: String?
    /// The read replicas' URLs (never logged: they may hold passwords).
    package var readReplicas: [String] = []
    package var readReplicaSettings = ReadReplicaSettings()
    package var readReplicaConsistency = ReadReplicaConsistency.caller

    package init() {}

    /// What stands between Caravan and PostgreSQL.
    package enum Pooler: String, Sendable, Hashable {
        /// A direct connection, or a pooler that keeps each session (PgBouncer's session mode).
        case none
        /// A pooler that lends a server connection for one transaction only (PgBouncer's transaction mode).
        case transaction
    }

    static let keys = ["db_pool_size", "db_pool_acquire_timeout", "db_prepared_statements", "db_pooler", "listen_url",
                       "read_replicas", "read_replica_max_lag", "read_replica_check_interval", "read_replica_token_wait",
                       "read_replica_consistency"]

    static func resolve(_ lookup: (String) -> String?) throws(CaravanError) -> DatabasePoolSettings {
        var settings = DatabasePoolSettings()
        if let text = lookup("db_pool_size") {
            guard let size = Int(text), (1...1000).contains(size) else {
                throw CaravanError(.invalidValue, "db_pool_size must be an integer from 1 to 1000, got \"\(text.prefix(32))\"")
            }
            settings.size = size
        }
        if let text = lookup("db_pool_acquire_timeout") {
            guard let timeout = ChangeLogRetention.parseDuration(text), timeout > .zero else {
                throw CaravanError(.invalidValue, "db_pool_acquire_timeout must be a duration such as 10s or 2m, got \"\(text.prefix(32))\"")
            }
            settings.acquireTimeout = timeout
        }
        if let text = lookup("db_prepared_statements") {
            guard ["true", "false"].contains(text) else { throw CaravanError(.invalidValue, "db_prepared_statements must be true or false") }
            settings.preparedStatements = text == "true"
        }
        if let text = lookup("listen_url"), !text.isEmpty { settings.listenURL = text }
        if let text = lookup("db_pooler") {
            guard let pooler = Pooler(rawValue: text) else { throw CaravanError(.invalidValue, "db_pooler must be none or transaction") }
            settings.pooler = pooler
        }
        if settings.pooler == .transaction {
            // A transaction-mode pooler hands each transaction any server connection: a statement prepared on one is
            // unknown (or another statement) on the next.
            guard lookup("db_prepared_statements") != "true" else {
                throw CaravanError(.invalidConfiguration, "db_prepared_statements=true cannot work with db_pooler=transaction",
                                   hint: "named prepared statements live in a server session; leave db_prepared_statements unset")
            }
            settings.preparedStatements = false
            guard settings.listenURL != nil else {
                throw CaravanError(.invalidConfiguration, "db_pooler=transaction needs listen_url",
                                   hint: "LISTEN is session state a transaction-mode pooler loses: give listen_url (--listen-url, CARAVAN_LISTEN_URL) a postgres:// URL of the same database reached directly")
            }
        }
        if let text = lookup("read_replicas") {
            settings.readReplicas = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        for (key, path) in [("read_replica_max_lag", \ReadReplicaSettings.maxLag), ("read_replica_check_interval", \ReadReplicaSettings.checkInterval),
                            ("read_replica_token_wait", \ReadReplicaSettings.tokenWait)] {
            guard let text = lookup(key) else { continue }
            guard let duration = parseDuration(text), duration > .zero || key == "read_replica_token_wait" else {
                throw CaravanError(.invalidValue, "\(key) must be a duration such as 200ms, 5s or 1m, got \"\(text.prefix(32))\"")
            }
            settings.readReplicaSettings[keyPath: path] = duration
        }
        if let text = lookup("read_replica_consistency") {
            guard let consistency = ReadReplicaConsistency(rawValue: text) else {
                throw CaravanError(.invalidValue, "read_replica_consistency must be caller or strong, got \"\(text.prefix(32))\"")
            }
            settings.readReplicaConsistency = consistency
        }
        return settings
    }

    /// `ChangeLogRetention.parseDuration`, and milliseconds (`200ms`).
    private static func parseDuration(_ text: String) -> Duration? {
        guard text.hasSuffix("ms") else { return ChangeLogRetention.parseDuration(text) }
        return Int64(text.dropLast(2)).flatMap { $0 >= 0 ? .milliseconds($0) : nil }
    }
}

/// What a REST read served by a read replica sees beyond the consistency token it carries (`read_replica_consistency`).
package enum ReadReplicaConsistency: String, Sendable, Hashable {
    /// The caller's own writes through this instance (`RecentWrites`); others' within the replicas' lag bound.
    case caller
    /// Every commit made before the read began, whoever made it and through whichever instance: the read first asks
    /// the primary for its WAL position (one small statement), then waits for a replica to replay it.
    case strong
}

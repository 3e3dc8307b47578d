package import CaravanCore
import CaravanSync

/// The PostgreSQL connection pool of a deployment (unused on SQLite), read once at the edge:
/// - `db_pool_size` / `CARAVAN_DB_POOL_SIZE`: connections at most (1…1000, default 20)
/// - `db_pool_acquire_timeout` / `CARAVAN_DB_POOL_ACQUIRE_TIMEOUT`: how long a request waits for a connection before
///   it is answered 503 (`30s`, `2m`; default `10s`, as PostgREST's `db-pool-acquisition-timeout`)
/// - `db_prepared_statements` / `CARAVAN_DB_PREPARED_STATEMENTS`: run statement shapes that repeat as named
///   prepared statements (`true`, the default; `false` behind a pooler that does not keep sessions)
/// They are logged when the deployment opens (`database.pool_size`, `database.pool_acquire_timeout`,
/// `database.prepared_statements`).
package struct DatabasePoolSettings: Sendable, Hashable {
    package var size = 20
    package var acquireTimeout: Duration = .seconds(10)
    package var preparedStatements = true

    package init() {}

    static let keys = ["db_pool_size", "db_pool_acquire_timeout", "db_prepared_statements"]

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
        return settings
    }
}

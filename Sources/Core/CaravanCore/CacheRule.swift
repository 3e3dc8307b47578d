/// A cache policy of the client SDK's local store, declared once per table or key-value cache (by the app module,
/// `AppModule.clientCaches`) and enforced by the store, not by code in each app. Rows with local writes still
/// waiting for the server are never removed.
///
/// A table under a removing rule is a partial replica: a removed row comes back when it next changes on the server,
/// on a new snapshot, or when the app reads it again.
public enum CacheRule: Sendable, Hashable {
    /// Rows of `table` fetched from the server longer ago than `seconds` are removed (LangMatcher profiles: 24 h).
    case timeToLive(table: String, seconds: Int64)
    /// Per value of `groupedBy`, only the `count` newest rows by `orderedBy` are kept (100 messages per conversation).
    case keepLast(table: String, count: Int, groupedBy: String, orderedBy: String)
    /// Rows of `table` whose timestamp column `column` is older than `seconds` are removed (messages after 90 days).
    case purgeOlderThan(table: String, column: String, seconds: Int64)
    /// A key-value cache of at most `maxEntries`, least recently used first out (translations: 1,000).
    case leastRecentlyUsed(cache: String, maxEntries: Int)
    /// The attachments cached on the device (downloaded storage objects and settled uploads) hold at most `maxBytes`,
    /// least recently used first out; uploads not yet settled are never removed (and not counted). Several rules add
    /// up; a store with none keeps 64 MiB.
    case attachments(maxBytes: Int64)
}

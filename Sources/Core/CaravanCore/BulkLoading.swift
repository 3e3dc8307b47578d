/// A store that can take a whole deployment's rows verbatim (`caravan copy`): rows are written as they are, outside
/// the write pipeline — no validation, no policies, no change-log append, no triggers (stored derived values such as
/// `updated_at` are kept) — inside one transaction the store lends to `body`.
package protocol BulkLoadingStore: Store {
    /// Runs `body` with a loader inside one transaction: committed when `body` returns, rolled back when it throws.
    func withBulkLoad<T: Sendable>(_ body: @escaping @Sendable (any BulkLoader) async throws -> T) async throws -> T
}

/// The statements of one bulk-load transaction.
package protocol BulkLoader: Sendable {
    /// Removes every row of `tables` (one statement; identity sequences restart).
    func removeAllRows(of tables: [TableSchema]) async throws

    /// Inserts `rows` (every column of `table`, in table order) as they are, primary keys and sequence values included.
    func insert(_ rows: [[Value]], into table: TableSchema) async throws

    /// Moves the identity sequences of `table` past the largest value stored, so the next generated value is new.
    func resetIdentity(of table: TableSchema) async throws
}

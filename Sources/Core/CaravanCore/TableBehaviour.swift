/// A column the write pipeline computes from the rest of the row with a Swift function, on every insert and every
/// update of the row (generated columns such as LangMatcher's `is_mutual`, derived ones such as the places design's
/// `completeness_score`). A value a client sends for it is replaced.
public struct DerivedColumn: Sendable {
    public let column: String
    /// The value from the row as it will be stored (every column of the table; absent ones are their default).
    public let compute: @Sendable (StoredRow) -> Value

    public init(_ column: String, compute: @escaping @Sendable (StoredRow) -> Value) {
        self.column = column
        self.compute = compute
    }
}

/// A column that repeats a column of the row another column refers to, so that a policy reads it on the row itself
/// (`collection_restaurants.group_id`, the group of the row's collection): the pipeline fills it from the referenced
/// row on insert, and again when an update changes the reference. A client need not send it; a value sent that
/// differs from the referenced row's is refused naming the column (23514).
public struct CopiedColumn: Sendable {
    /// The column filled (`group_id`).
    public let column: String
    /// The column holding the reference (`collection_id`).
    public let reference: String
    /// The referenced table (`collections`), its key column (`id`) and the column copied from it (`group_id`).
    public let table: String
    public let key: String
    public let source: String

    /// `column` is `table.source` of the row whose `key` equals this row's `reference`.
    public init(_ column: String, from table: String, _ source: String, where key: String, equals reference: String) {
        self.column = column
        self.reference = reference
        self.table = table
        self.key = key
        self.source = source
    }
}

/// A row of a table by column name: what derived columns and write hooks read.
public struct StoredRow: Sendable {
    public let table: TableSchema
    public let values: [Value]

    public init(table: TableSchema, values: [Value]) {
        self.table = table
        self.values = values
    }

    /// The value of `column` (`.null` for an unknown column).
    public subscript(column: String) -> Value {
        table.position(of: column).map { values[$0] } ?? .null
    }

    /// The text of `column`, or nil when NULL or not text.
    public func text(_ column: String) -> String? {
        if case .text(let text) = self[column] { return text }
        return nil
    }
}

/// One row written, as a write hook sees it after the write (in the same transaction).
public struct RowWrite: Sendable {
    public let operation: ChangeOperation
    /// The row as stored after the write (nil for a delete).
    public let new: StoredRow?
    /// The row before the write (nil for an insert).
    public let old: StoredRow?
}

/// What the write pipeline does for a table besides its declaration: derived columns, `updated_at` maintenance and
/// hooks that keep other rows in step (counters such as a conversation's message count). Every write path — REST,
/// RPC, sync push, importers — runs them, in the write's transaction.
public struct TableBehaviour: Sendable {
    public let table: String
    public let derived: [DerivedColumn]
    /// Columns repeated from a referenced row, filled by the pipeline.
    public let copied: [CopiedColumn]
    /// A timestamp column set to the transaction's time on every update that does not set it itself.
    public let touches: String?
    /// Runs after each row written to the table, in the same transaction, as the service role (what it writes goes
    /// through the pipeline too: validated, change-logged, published). An error rolls the write back.
    public let afterWrite: (@Sendable (RowWrite, any StoreTransaction) async throws -> Void)?
    /// Runs once after each statement that wrote rows to the table (an insert of many rows, an update or a delete
    /// reaching many), with every row it wrote in order, in the same transaction, as the service role: PostgreSQL's
    /// `FOR EACH STATEMENT` trigger with transition tables. A hook keeping an aggregate (a conversation's message
    /// count) does its work once per statement and per aggregate instead of once per row. An error rolls the write
    /// back. It runs after `afterWrite` has run for each row.
    public let afterStatement: (@Sendable ([RowWrite], any StoreTransaction) async throws -> Void)?
    /// Columns an insert sets to the caller's user id (JWT `sub`) when the row does not send them: Supabase's
    /// `default auth.uid()`, applied by the pipeline (no engine has the caller's id in its DDL defaults). A caller
    /// without a user id (anon, the service role) gets no value, so a NOT NULL column refuses the row (23502).
    public let defaultsToCaller: [String]
    /// Runs before the table is read over REST or pulled by sync, in a transaction of its own as the service role:
    /// work a reader must find done, such as settling what a deadline that has passed decides. It should check
    /// cheaply (an index) whether anything is due and write only then; an error fails the read.
    public let beforeRead: (@Sendable (any StoreTransaction) async throws -> Void)?

    public init(_ table: String, derived: [DerivedColumn] = [], copied: [CopiedColumn] = [], touches: String? = nil,
                afterWrite: (@Sendable (RowWrite, any StoreTransaction) async throws -> Void)? = nil,
                afterStatement: (@Sendable ([RowWrite], any StoreTransaction) async throws -> Void)? = nil, defaultsToCaller: [String] = [],
                beforeRead: (@Sendable (any StoreTransaction) async throws -> Void)? = nil) {
        self.table = table
        self.derived = derived
        self.copied = copied
        self.touches = touches
        self.afterWrite = afterWrite
        self.afterStatement = afterStatement
        self.defaultsToCaller = defaultsToCaller
        self.beforeRead = beforeRead
    }
}

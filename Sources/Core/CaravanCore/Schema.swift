import Foundation

/// The logical type of a column. Adapters choose the physical type (SQLite affinity, Postgres type).
public enum ColumnType: Sendable, Hashable {
    case text
    case integer
    case double
    /// An exact decimal in Postgres (`numeric(p,s)`); a REAL in SQLite.
    case decimal(precision: Int, scale: Int)
    case boolean
    case uuid
    /// An instant, stored and emitted in UTC.
    case timestamp
    case date
    /// Any JSON document (Postgres `jsonb`).
    case json
    /// An array of text (Postgres `text[]`), a JSON array of strings in SQLite.
    case textArray

    /// The Postgres type name, as clients see it in errors and realtime column lists.
    public var postgresName: String {
        switch self {
        case .text: "text"
        case .integer: "int8"
        case .double: "float8"
        case .decimal: "numeric"
        case .boolean: "bool"
        case .uuid: "uuid"
        case .timestamp: "timestamptz"
        case .date: "date"
        case .json: "jsonb"
        case .textArray: "_text"
        }
    }

    /// The name Postgres uses in "invalid input syntax for type …" messages.
    public var inputTypeName: String {
        switch self {
        case .text: "text"
        case .integer: "integer"
        case .double: "double precision"
        case .decimal: "numeric"
        case .boolean: "boolean"
        case .uuid: "uuid"
        case .timestamp: "timestamp with time zone"
        case .date: "date"
        case .json: "json"
        case .textArray: "text[]"
        }
    }

    public var isNumeric: Bool {
        switch self {
        case .integer, .double, .decimal: true
        default: false
        }
    }
}

/// A column default, rendered by each adapter in its own dialect.
public enum ColumnDefault: Sendable, Hashable {
    case value(Value)
    /// The transaction's current time.
    case now
    /// A random (version 4) UUID.
    case randomUUID
}

/// One column of a table.
public struct Column: Sendable, Hashable {
    public let name: String
    public let type: ColumnType
    public let isNullable: Bool
    public let defaultValue: ColumnDefault?
    /// Set on a column of the outer row referenced from inside a subquery (policy membership tests).
    public let qualifier: String?
    /// The name the column had in the previous version of its table's declaration: `caravan migrations new` renames
    /// that column (keeping its values) instead of refusing to drop it; sync answers to the old name too, for devices
    /// built before the rename (a pushed old name is taken as this column, pulled rows carry both names).
    public let renamedFrom: String?

    /// Set on a value taken out of a JSON column (`data->a->>b`): the column is the JSON column, its type that of the
    /// value (`.json` after `->`, `.text` after `->>`).
    public private(set) var jsonPath: JSONPath? = nil

    public init(_ name: String, _ type: ColumnType, nullable: Bool = true, default defaultValue: ColumnDefault? = nil, renamedFrom: String? = nil,
                qualifier: String? = nil) {
        self.name = name
        self.type = type
        self.isNullable = nullable
        self.defaultValue = defaultValue
        self.renamedFrom = renamedFrom
        self.qualifier = qualifier
    }

    /// Whether the column is stored alike: name, type, nullability and default (not its declared history).
    public func isStoredLike(_ other: Column) -> Bool {
        name == other.name && type == other.type && isNullable == other.isNullable && defaultValue == other.defaultValue
    }

    /// The value at `path` inside this JSON column.
    public func at(_ path: JSONPath) -> Column {
        var column = Column(name, path.asText ? .text : .json, nullable: true, qualifier: qualifier)
        column.jsonPath = path
        return column
    }
}

/// A path into a JSON column, as PostgREST writes it (`data->a->0->>b`): keys and array indexes, and whether the
/// last arrow takes the value as text (`->>`) rather than JSON (`->`). Keys are letters, digits and `_` only, so a
/// path can be written into SQL as literals.
public struct JSONPath: Sendable, Hashable {
    public enum Step: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    public let steps: [Step]
    public let asText: Bool

    public init(steps: [Step], asText: Bool) {
        self.steps = steps
        self.asText = asText
    }

    /// The name PostgREST gives the selected value: the last key, else the column's.
    public func outputName(column: String) -> String {
        for step in steps.reversed() { if case .key(let key) = step { return key } }
        return column
    }

    /// Parses `col->a->>b` into the column's name and the path (nil path for a plain name); a path has at most
    /// `QueryLimits.jsonPathSteps` steps.
    public static func parse(_ text: String) throws(CaravanError) -> (column: String, path: JSONPath?) {
        guard let first = text.range(of: "->") else { return (text, nil) }
        let column = String(text[..<first.lowerBound])
        var rest = Substring(text[first.lowerBound...])
        var steps: [Step] = []
        var asText = false
        func failure(_ details: String) -> CaravanError {
            CaravanError(.parseError, "\"failed to parse JSON path (\(text.prefix(200)))\" (line 1, column 1)", details: details)
        }
        while !rest.isEmpty {
            guard !asText else { throw failure("->> must be the last arrow") }
            guard steps.count < QueryLimits.jsonPathSteps else {
                throw QueryLimits.exceeded("steps in a JSON path", limit: QueryLimits.jsonPathSteps)
            }
            if rest.hasPrefix("->>") {
                asText = true
                rest = rest.dropFirst(3)
            } else if rest.hasPrefix("->") {
                rest = rest.dropFirst(2)
            } else {
                throw failure("expected -> or ->>")
            }
            let end = rest.range(of: "->")?.lowerBound ?? rest.endIndex
            let piece = String(rest[..<end])
            rest = rest[end...]
            if let index = Int(piece) {
                steps.append(.index(index))
            } else if !piece.isEmpty, piece.unicodeScalars.allSatisfy({ CharacterSet.jsonPathKey.contains($0) }) {
                steps.append(.key(piece))
            } else {
                throw failure("a JSON path key is letters, digits and _ (got \"\(piece)\")")
            }
        }
        guard !column.isEmpty else { throw failure("no column before ->") }
        return (column, JSONPath(steps: steps, asText: asText))
    }
}

extension CharacterSet {
    static let jsonPathKey = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
}

/// What happens to referencing rows when the referenced row is deleted.
public enum ReferentialAction: Sendable, Hashable {
    case noAction, cascade, setNull, restrict
}

/// A foreign key from `columns` to `referencedTable(referencedColumns)`.
public struct ForeignKey: Sendable, Hashable {
    public let columns: [String]
    public let referencedTable: String
    public let referencedColumns: [String]
    public let onDelete: ReferentialAction

    public init(_ columns: [String], references table: String, _ referencedColumns: [String], onDelete: ReferentialAction = .noAction) {
        self.columns = columns
        self.referencedTable = table
        self.referencedColumns = referencedColumns
        self.onDelete = onDelete
    }
}

/// A named CHECK constraint. The rule is a predicate over the row's columns with SQL semantics:
/// the row is rejected only when the predicate is false (unknown passes).
public struct CheckConstraint: Sendable, Hashable {
    public let name: String
    public let rule: Predicate

    public init(_ name: String, _ rule: Predicate) {
        self.name = name
        self.rule = rule
    }
}

/// One key part of an index.
public struct IndexKey: Sendable, Hashable {
    public let column: String
    public let descending: Bool

    public init(_ column: String, descending: Bool = false) {
        self.column = column
        self.descending = descending
    }
}

/// How an index is built. Adapters without an equivalent may skip an index kind (documented per adapter).
public enum IndexKind: Sendable, Hashable {
    /// An ordinary ordered index.
    case btree
    /// Membership in an array or JSON column (Postgres GIN); SQLite has no equivalent and skips it.
    case arrayMembership
    /// An ordered index on text compared byte by byte, whatever the database collation, so that prefix tests
    /// (`LIKE 'abc%'`) can use it: PostgreSQL `text_pattern_ops`; SQLite's default BINARY collation already is.
    case textPrefix
}

/// A secondary index.
public struct Index: Sendable, Hashable {
    public let name: String
    public let keys: [IndexKey]
    public let isUnique: Bool
    public let kind: IndexKind
    /// A partial index condition.
    public let predicate: Predicate?

    public init(_ name: String, _ keys: [IndexKey], unique: Bool = false, kind: IndexKind = .btree, where predicate: Predicate? = nil) {
        self.name = name
        self.keys = keys
        self.isUnique = unique
        self.kind = kind
        self.predicate = predicate
    }
}

/// Whether a table is served over REST.
public enum Exposure: Sendable, Hashable {
    /// Reachable through `/rest/v1/<table>` (subject to access rules).
    case rest
    /// Internal (like `auth.users`): never reachable through REST.
    case `internal`
    /// Internal and never written to the change log: credentials, sessions, one-time codes.
    case secret
}

/// Table-name prefixes reserved for Caravan's own tables (`auth_users`, `auth_sessions`, `caravan_changes`,
/// `storage_objects`, …), on both engines: an app table may not start with one, so app and system tables never
/// collide (an app may have a `users` table). `auth_` and `storage_` stand for Supabase's `auth` and `storage` schemas.
package enum ReservedTableNames {
    package static let prefixes = ["auth_", "caravan_", "storage_"]
    /// The modules that declare Caravan's own tables under those prefixes.
    package static let systemModules: Set<String> = ["system", "auth", "storage"]
}

/// One declaration per table: the single source of truth for DDL, validation, REST and policies.
public struct TableSchema: Sendable, Hashable {
    /// The table's name (what REST, the change log, policies and SQL call it).
    public let name: String
    public let columns: [Column]
    public let primaryKey: [String]
    public let uniques: [[String]]
    public let foreignKeys: [ForeignKey]
    public let checks: [CheckConstraint]
    public let indexes: [Index]
    public let exposure: Exposure
    /// The table's search indexes (full text, trigrams, geo), when it declares any.
    public let search: SearchIndexes?
    /// Whether clients may mirror the table through `/sync/v1` (the app module's declaration; never for internal
    /// or secret tables).
    public let isSynced: Bool
    /// The column holding the id of the user a row belongs to (the app module's declaration), or nil when rows
    /// belong to nobody in particular. A per-user export (`caravan export user`, `export_my_data`) takes exactly the
    /// rows whose owner column is the user's id.
    public let owner: String?
    /// Columns each holding the id of a user the row belongs to as well (a message's sender and receiver, a match's
    /// two users): a per-user export takes the rows where any of them, or `owner`, is the user's id.
    public let participants: [String]
    /// For a table keyed by a user's id (a public profile): the columns another user's export shows of a row when
    /// that user appears in the exported rows (`["id", "first_name"]`) — nothing else of other users is exported.
    public let exportCard: [String]?
    private let columnIndex: [String: Int]

    public init(
        _ name: String,
        columns: [Column],
        primaryKey: [String],
        uniques: [[String]] = [],
        foreignKeys: [ForeignKey] = [],
        checks: [CheckConstraint] = [],
        indexes: [Index] = [],
        exposure: Exposure = .rest,
        search: SearchIndexes? = nil,
        synced: Bool = false,
        owner: String? = nil,
        participants: [String] = [],
        exportCard: [String]? = nil
    ) {
        self.name = name
        self.owner = owner
        self.participants = participants
        self.exportCard = exportCard
        self.isSynced = synced && exposure == .rest
        self.columns = columns
        self.primaryKey = primaryKey
        self.uniques = uniques
        self.foreignKeys = foreignKeys
        self.checks = checks
        self.indexes = indexes
        self.exposure = exposure
        self.search = search
        var index: [String: Int] = [:]
        for (i, column) in columns.enumerated() { index[column.name] = i }
        self.columnIndex = index
    }

    /// Whether writes to the table are appended to the change log (everything but `.secret` tables).
    public var isChangeLogged: Bool { exposure != .secret }

    /// The column named `name`, or nil.
    public func column(named name: String) -> Column? {
        columnIndex[name].map { columns[$0] }
    }

    /// The column named `name`; throws the PostgREST "column does not exist" error otherwise.
    public func requireColumn(_ name: String) throws(CaravanError) -> Column {
        guard let column = column(named: name) else {
            throw CaravanError(.unknownColumn, "column \(self.name).\(name) does not exist")
        }
        return column
    }

    /// A column, or a value inside a JSON column (`data->a->>b`): 42703 for an unknown column, an error naming the
    /// operator for a path into a column that is not JSON.
    public func resolveColumn(_ text: String) throws(CaravanError) -> Column {
        let (name, path) = try JSONPath.parse(text)
        let column = try requireColumn(name)
        guard let path else { return column }
        guard column.type == .json else {
            throw CaravanError(.unsupportedOperator, "operator does not exist: \(column.type.postgresName) -> unknown",
                               hint: "JSON paths apply to json columns; \(self.name).\(name) is \(column.type.postgresName)")
        }
        return column.at(path)
    }

    /// The position of `name` in `columns`.
    public func position(of name: String) -> Int? { columnIndex[name] }

    /// Whether `columns` (in any order) are the primary key or a declared UNIQUE column set: a conflict target.
    public func isUniqueKey(_ columns: [String]) -> Bool {
        let wanted = Set(columns)
        return ([primaryKey] + uniques).contains { Set($0) == wanted }
    }
}


/// One declared schema change of a migration. Adapters render it to their dialect (through the shared serializer);
/// the rendered text is frozen into the module's committed migration files.
public enum SchemaChange: Sendable, Hashable {
    /// The table with its columns, keys, checks, foreign keys, indexes and (when declared) its search objects.
    case createTable(TableSchema)
    /// A new column of an existing table (its CHECKs of the column's type included).
    case addColumn(Column, to: TableSchema)
    /// A new index of an existing table.
    case createIndex(Index, on: TableSchema)
    /// The search objects (full text, trigrams, geo) of an existing table, filled from its current rows.
    case createSearch(TableSchema)
    /// An existing table under a new name, with its rows, keys, indexes and the foreign keys that point at it.
    case renameTable(String, to: String)
    /// A column of an existing table (the last string) under a new name, with its values, and the keys and indexes
    /// over it (declared with `Column(…, renamedFrom:)`).
    case renameColumn(String, to: String, in: String)
    /// An index of a table (the second string) dropped (declared with `SchemaRemoval.index`).
    case dropIndex(String, on: String)
    /// A column of a table (the second string) dropped with its values (declared with `SchemaRemoval.column`).
    case dropColumn(String, from: String)
    /// A table dropped with its rows (declared with `SchemaRemoval.table`).
    case dropTable(String)
}

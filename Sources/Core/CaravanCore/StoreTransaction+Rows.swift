
/// Reading helpers for app modules' RPCs and hooks, on the storage port (no SQL): rows and counts under the caller's
/// select policy, typed equality filters, and the values they hold.
extension StoreTransaction {
    /// The `columns` of the rows of `table` matching `filter` and the caller's select policy, in `order`.
    public func rows(_ table: TableSchema, _ columns: [String], where filter: BoundPredicate, order: [OrderTerm] = [], limit: Int? = nil) async throws -> [[Value]] {
        let query = Query(select: columns.map { .column(name: $0, alias: nil, cast: nil) }, order: order, limit: limit)
        let access = BoundPredicate.both(filter, try self.access.readRule(table))
        return try await fetch(ReadPlan(table: table, query: query, access: access, maxRows: nil, includeCount: false)).rows
    }

    /// The first row of `rows(…)` as a row by column name, or nil.
    public func row(_ table: TableSchema, where filter: BoundPredicate) async throws -> StoredRow? {
        try await rows(table, table.columns.map(\.name), where: filter, limit: 1).first.map { StoredRow(table: table, values: $0) }
    }

    /// How many rows of `table` match `filter` under the caller's select policy.
    public func count(_ table: TableSchema, where filter: BoundPredicate) async throws -> Int {
        let query = Query(select: [.column(name: table.primaryKey[0], alias: nil, cast: nil)], limit: 0)
        let access = BoundPredicate.both(filter, try self.access.readRule(table))
        return try await fetch(ReadPlan(table: table, query: query, access: access, maxRows: nil, includeCount: true)).totalCount ?? 0
    }
}

extension TableSchema {
    /// `column = value`, typed by the column (a value that does not parse matches nothing).
    public func equals(_ column: String, _ value: Value) throws -> BoundPredicate {
        let declared = try requireColumn(column)
        if case .text(let text) = value, declared.type != .text {
            guard let typed = try? declared.type.value(fromText: text) else { return .constant(false) }
            return .compare(declared, .eq, typed)
        }
        return .compare(declared, .eq, value)
    }

    /// Every `column = value` of `pairs`, ANDed.
    public func matching(_ pairs: KeyValuePairs<String, Value>) throws -> BoundPredicate {
        .and(try pairs.map { try equals($0.key, $0.value) })
    }

    /// `column IN values` (text values typed by the column).
    public func isIn(_ column: String, _ values: [String]) throws -> BoundPredicate {
        let declared = try requireColumn(column)
        if values.isEmpty { return .constant(false) }
        return .inList(declared, try values.map { declared.type == .text ? .text($0) : try declared.type.value(fromText: $0) })
    }
}

extension Value {
    /// The text of a text (or uuid, timestamp) value, or nil.
    public var textValue: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    /// The integer of an integer value, or nil.
    public var integerValue: Int64? {
        if case .integer(let n) = self { return n }
        return nil
    }

    /// The boolean of a boolean value, or nil.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The strings of a text-array value (JSON text), or nil when NULL or not an array of strings.
    public var textArrayValue: [String]? {
        guard case .json(let text) = self, case .array(let items)? = try? JSONParser.parse(text) else { return nil }
        var result: [String] = []
        for item in items {
            guard case .string(let string) = item else { return nil }
            result.append(string)
        }
        return result
    }

    /// The members of a JSON object value, or nil.
    public var jsonObject: [(key: String, value: JSONValue)]? {
        guard case .json(let text) = self, case .object(let pairs)? = try? JSONParser.parse(text) else { return nil }
        return pairs.map { ($0.key, $0.value) }
    }
}

/// Whether an embedded resource is one related row (an object, or null) or many (an array).
public enum EmbedCardinality: Sendable, Hashable {
    case one
    case many
}

/// An embedded resource resolved against the schema and the caller's policies: the adapters render it as one
/// correlated subquery of the read's statement, whose value is the JSON of the related row or rows.
public final class EmbeddedRead: Sendable, Hashable {
    public let table: TableSchema
    public let cardinality: EmbedCardinality
    public let outputs: [OutputColumn]
    /// The join to the parent row, the embed's own filters and the caller's select policy on `table`, ANDed.
    public let filter: BoundPredicate
    public let order: [ResolvedOrder]
    public let limit: Int?
    public let offset: Int

    init(table: TableSchema, cardinality: EmbedCardinality, outputs: [OutputColumn], filter: BoundPredicate, order: [ResolvedOrder],
         limit: Int?, offset: Int) {
        self.table = table
        self.cardinality = cardinality
        self.outputs = outputs
        self.filter = filter
        self.order = order
        self.limit = limit
        self.offset = offset
    }

    public static func == (a: EmbeddedRead, b: EmbeddedRead) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// What resolving embedded resources needs from the deployment: the tables a caller may name (exposed ones) and
/// the caller's select policy on each.
public struct EmbeddingContext: Sendable {
    public let table: @Sendable (String) -> TableSchema?
    public let readRule: @Sendable (TableSchema) throws(CaravanError) -> BoundPredicate

    public init(table: @escaping @Sendable (String) -> TableSchema?,
                readRule: @escaping @Sendable (TableSchema) throws(CaravanError) -> BoundPredicate) {
        self.table = table
        self.readRule = readRule
    }
}

/// Finds the relationship of an embedded resource through the declared foreign keys, as PostgREST does:
/// the parent's key to the embedded table (many-to-one: an object), the embedded table's key to the parent
/// (one-to-many: an array; one-to-one, an object, when that key is unique there).
struct EmbedResolver {
    let context: EmbeddingContext
    let query: Query
    let maxRows: Int?

    /// One related column pair: the embedded table's column equals the parent's.
    private struct Relationship {
        let pairs: [(embedded: String, parent: String)]
        let cardinality: EmbedCardinality
        let columns: Set<String>
        /// The column that names this foreign key in a hint: the first column of the side that holds it.
        let hintColumn: String
    }

    /// The output of `request` embedded in rows of `parent` (whose rows are referred to by its name), and, for
    /// `!inner`, the condition a parent row must meet.
    func resolve(_ request: EmbedRequest, parent: TableSchema, path: String, ancestors: Set<String>)
        throws(CaravanError) -> (output: OutputColumn, innerCondition: BoundPredicate?) {
        guard let table = context.table(request.table) else {
            throw CaravanError(.unsupportedEmbedding, "Could not find a relationship between '\(parent.name)' and '\(request.table)' in the schema cache",
                               hint: "Embed a table that has a foreign key to or from '\(parent.name)'")
        }
        guard !ancestors.contains(table.name) else {
            throw CaravanError(.unsupportedEmbedding, "Embedding '\(table.name)' inside itself is not supported yet",
                               hint: "Read the related rows of '\(table.name)' with a second request")
        }
        let relationship = try relationship(of: request, table: table, parent: parent)
        let embeddedQuery = query.embedded[path] ?? Query()
        let correlation = try relationship.pairs.map { pair throws(CaravanError) -> BoundPredicate in
            let embedded = try table.requireColumn(pair.embedded)
            let parentColumn = try parent.requireColumn(pair.parent)
            return .compareColumns(embedded, .eq, Column(parentColumn.name, parentColumn.type, qualifier: parent.name))
        }
        let filter = BoundPredicate.and(correlation + [try embeddedQuery.filter.bound(to: table), try context.readRule(table)])

        var outputs: [OutputColumn] = []
        var inner: [BoundPredicate] = []
        for item in request.select {
            switch item {
            case .star:
                outputs += table.columns.map { OutputColumn(name: $0.name, column: $0, cast: nil) }
            case .column(let name, let alias, _):
                outputs.append(OutputColumn(name: alias ?? name, column: try table.requireColumn(name), cast: nil))
            case .embed(let nested):
                let resolved = try resolve(nested, parent: table, path: path + "." + nested.name, ancestors: ancestors.union([table.name]))
                outputs.append(resolved.output)
                if let condition = resolved.innerCondition { inner.append(condition) }
            }
        }
        var order = try embeddedQuery.order.map { term throws(CaravanError) in
            ResolvedOrder(column: try table.requireColumn(term.column), direction: term.direction, nulls: term.effectiveNulls)
        }
        if order.isEmpty {  // a stable order, as the top level has: the key
            for key in table.primaryKey { order.append(ResolvedOrder(column: try table.requireColumn(key), direction: .ascending, nulls: .last)) }
        }
        let limit = relationship.cardinality == .one ? 1 : embeddedQuery.limit.map { limit in maxRows.map { min($0, limit) } ?? limit } ?? maxRows
        let read = EmbeddedRead(table: table, cardinality: relationship.cardinality, outputs: outputs,
                                filter: inner.isEmpty ? filter : .and([filter] + inner), order: order, limit: limit,
                                offset: embeddedQuery.offset ?? 0)
        let output = OutputColumn(name: request.name, column: Column(request.name, .json), cast: nil, embed: read)
        return (output, request.inner ? .exists(table, read.filter) : nil)
    }

    /// The one foreign key between `parent` and `table` that `request` means; PGRST200 when there is none,
    /// PGRST201 when several fit and no hint chooses.
    private func relationship(of request: EmbedRequest, table: TableSchema, parent: TableSchema) throws(CaravanError) -> Relationship {
        var candidates: [Relationship] = []
        for key in parent.foreignKeys where key.referencedTable == table.name {
            candidates.append(Relationship(pairs: Array(zip(key.referencedColumns, key.columns)), cardinality: .one,
                                           columns: Set(key.columns + key.referencedColumns), hintColumn: key.columns[0]))
        }
        for key in table.foreignKeys where key.referencedTable == parent.name {
            let unique = Set(table.primaryKey) == Set(key.columns) || table.uniques.contains { Set($0) == Set(key.columns) }
            candidates.append(Relationship(pairs: Array(zip(key.columns, key.referencedColumns)), cardinality: unique ? .one : .many,
                                           columns: Set(key.columns + key.referencedColumns), hintColumn: key.columns[0]))
        }
        if let hint = request.hint {
            candidates = candidates.filter { $0.columns.contains(hint) }
        }
        switch candidates.count {
        case 0:
            throw CaravanError(.unsupportedEmbedding, "Could not find a relationship between '\(parent.name)' and '\(table.name)' in the schema cache",
                               hint: request.hint.map { "No foreign key between them has the column '\($0)'" }
                                   ?? "Embed a table that has a foreign key to or from '\(parent.name)'")
        case 1:
            return candidates[0]
        default:
            let options = candidates.map { "'\(table.name)!\($0.hintColumn)'" }
            let details = candidates.map { $0.pairs.map { "\(table.name).\($0.embedded) = \(parent.name).\($0.parent)" }.joined(separator: " and ") }
            throw CaravanError(.ambiguousEmbedding, "Could not embed because more than one relationship was found for '\(parent.name)' and '\(table.name)'",
                               details: details.joined(separator: "; "),
                               hint: "Try changing '\(table.name)' to one of the following: \(options.joined(separator: ", ")). Find the desired relationship in the 'details' key.")
        }
    }
}

/// What an embedded resource's value is: one related row (an object, or null), many (an array), their count
/// (`reviews(count)`: `[{"count": n}]`, as PostgREST answers), or, for a spread (`...places(name)`), one column of
/// the one related row, in its own type, as if it were the parent's.
public enum EmbedCardinality: Sendable, Hashable {
    case one
    case many
    case count
    case value
}

/// An embedded resource resolved against the schema and the caller's policies: the adapters render it as one
/// correlated subquery of the read's statement, whose value is the JSON of the related row or rows.
package final class EmbeddedRead: Sendable, Hashable {
    package let table: TableSchema
    package let cardinality: EmbedCardinality
    package let outputs: [OutputColumn]
    /// The join to the parent row, the embed's own filters and the caller's select policy on `table`, ANDed.
    package let filter: BoundPredicate
    package let order: [ResolvedOrder]
    package let limit: Int?
    package let offset: Int
    /// The implicit GROUP BY when the embed's select aggregates (`reviews(rating.avg())`), per parent row.
    package let groupBy: [Column]

    init(table: TableSchema, cardinality: EmbedCardinality, outputs: [OutputColumn], filter: BoundPredicate, order: [ResolvedOrder],
         limit: Int?, offset: Int, groupBy: [Column] = []) {
        self.groupBy = groupBy
        self.table = table
        self.cardinality = cardinality
        self.outputs = outputs
        self.filter = filter
        self.order = order
        self.limit = limit
        self.offset = offset
    }

    package static func == (a: EmbeddedRead, b: EmbeddedRead) -> Bool { a === b }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// What resolving embedded resources needs from the deployment: the tables a caller may name (exposed ones),
/// the caller's select policy on each, and the engine the read runs on (which sets how deep embeds may nest).
public struct EmbeddingContext: Sendable {
    public let table: @Sendable (String) -> TableSchema?
    /// Every table a caller may name, for junctions of many-to-many relationships.
    public let tables: [TableSchema]
    public let readRule: @Sendable (TableSchema) throws(CaravanError) -> BoundPredicate
    /// The engine the read's statement runs on; nil for none in particular (`QueryLimits.selectDepth` applies).
    public let dialect: SQLDialect?

    public init(table: @escaping @Sendable (String) -> TableSchema?, tables: [TableSchema],
                readRule: @escaping @Sendable (TableSchema) throws(CaravanError) -> BoundPredicate, dialect: SQLDialect? = nil) {
        self.table = table
        self.tables = tables
        self.readRule = readRule
        self.dialect = dialect
    }

    /// How deep embedded resources may nest on this engine.
    var maxDepth: Int { dialect.map(QueryLimits.embedDepth(on:)) ?? QueryLimits.selectDepth }

    /// The error of an embed nested past `maxDepth`.
    var depthError: CaravanError {
        let engine = switch dialect {
        case .sqlite?: "the SQLite engine"
        case .postgres?: "the PostgreSQL engine"
        case nil: "this server"
        }
        return QueryLimits.exceeded("levels of nested embedded resources that \(engine) serves", limit: maxDepth,
                                    hint: "Embed fewer levels deep, or read the deeper rows with a second request")
    }
}

/// Finds the relationship of an embedded resource through the declared foreign keys, as PostgREST does:
/// the parent's key to the embedded table (many-to-one: an object), the embedded table's key to the parent
/// (one-to-many: an array; one-to-one, an object, when that key is unique there), or a junction table with a key to
/// each whose columns are in its primary key (many-to-many: an array).
struct EmbedResolver {
    let context: EmbeddingContext
    let query: Query
    let maxRows: Int?

    private struct Relationship {
        /// How an embedded row relates to the parent row (parent columns qualified by the parent's name).
        let join: BoundPredicate
        let cardinality: EmbedCardinality
        /// The columns a `!hint` may name to choose this relationship, and the foreign key's own, in order (the one
        /// to suggest is the first that no other candidate has).
        let columns: Set<String>
        let keyColumns: [String]
        let description: String
    }

    /// The outputs of `request` embedded in rows of `parent` (one, or one per column for a spread), and, for
    /// `!inner`, the condition a parent row must meet.
    /// `depth` is 1 for an embed of the read's own table.
    func resolve(_ request: EmbedRequest, parent: TableSchema, path: String, depth: Int = 1)
        throws(CaravanError) -> (outputs: [OutputColumn], innerCondition: BoundPredicate?) {
        guard depth <= context.maxDepth else { throw context.depthError }
        guard let table = context.table(request.table) else {
            throw noRelationship(parent: parent, table: request.table, hint: request.hint)
        }
        // A table may come back deeper (`places → reviews → places`): SQL resolves each qualified name to the
        // nearest table of that name, which is the right one, since a join names only its direct parent. A table
        // embedded directly in itself (a self-referencing key) would need aliases the serializer does not give yet.
        guard table.name != parent.name else {
            throw CaravanError(.unsupportedEmbedding, "Embedding '\(table.name)' directly inside itself is not supported yet",
                               hint: "Read the related rows of '\(table.name)' with a second request")
        }
        let relationship = try relationship(of: request, table: table, parent: parent)
        let embeddedQuery = query.embedded[path] ?? Query()
        let filter = BoundPredicate.and([relationship.join, try embeddedQuery.filter.bound(to: table), try context.readRule(table)])
        let (outputs, inner) = try outputs(of: request, table: table, path: path, depth: depth)
        guard outputs.count <= QueryLimits.embeddedValues else {
            throw QueryLimits.exceeded("values selected inside one embedded resource ('\(request.name)')", limit: QueryLimits.embeddedValues,
                                       hint: "Select fewer columns inside the embed")
        }
        let groupBy = try ReadPlan.grouping(outputs, table: table)
        let aggregated = outputs.contains { $0.aggregate != nil }
        let order = aggregated ? try ReadPlan.groupedOrder(try explicitOrder(embeddedQuery, table: table), grouping: groupBy, table: table)
            : try self.order(embeddedQuery, table: table)
        let combined = inner.isEmpty ? filter : .and([filter] + inner)
        if aggregated, request.spread || relationship.cardinality != .many {
            throw CaravanError(.unsupportedEmbedding, "Aggregates inside '\(request.name)' need a to-many embed; '\(parent.name)' has one '\(table.name)'",
                               hint: "Aggregate over '\(table.name)' from its own endpoint, or embed it as an array")
        }
        let innerCondition: BoundPredicate? = request.inner ? .existsUnaliased(table, combined) : nil

        if request.spread {
            guard relationship.cardinality == .one else {
                throw CaravanError(.unsupportedEmbedding, "A spread embed ('...\(request.table)') needs a to-one relationship; '\(parent.name)' has many '\(table.name)'",
                                   hint: "Embed it without '...' to get an array")
            }
            let spread = try outputs.map { output throws(CaravanError) -> OutputColumn in
                guard output.embed == nil else {
                    throw CaravanError(.unsupportedEmbedding, "Embedding inside a spread ('...\(request.table)') is not supported yet")
                }
                let read = EmbeddedRead(table: table, cardinality: .value, outputs: [output], filter: combined, order: order, limit: 1, offset: 0)
                return OutputColumn(name: output.name, column: output.column, cast: nil, embed: read)
            }
            return (spread, innerCondition)
        }
        if outputs.count == 1, outputs[0].column.name == "count", table.column(named: "count") == nil, relationship.cardinality == .many {
            let read = EmbeddedRead(table: table, cardinality: .count, outputs: outputs, filter: combined, order: [], limit: nil, offset: 0)
            return ([OutputColumn(name: request.name, column: Column(request.name, .json), cast: nil, embed: read)], innerCondition)
        }
        let limit = relationship.cardinality == .one ? 1 : embeddedQuery.limit.map { limit in maxRows.map { min($0, limit) } ?? limit } ?? maxRows
        let read = EmbeddedRead(table: table, cardinality: relationship.cardinality, outputs: outputs, filter: combined, order: order, limit: limit,
                                offset: embeddedQuery.offset ?? 0, groupBy: groupBy)
        return ([OutputColumn(name: request.name, column: Column(request.name, .json), cast: nil, embed: read)], innerCondition)
    }

    /// The embed's own outputs, nested embeds resolved, and the `!inner` conditions of those.
    private func outputs(of request: EmbedRequest, table: TableSchema, path: String, depth: Int)
        throws(CaravanError) -> ([OutputColumn], [BoundPredicate]) {
        var outputs: [OutputColumn] = []
        var inner: [BoundPredicate] = []
        for item in request.select {
            switch item {
            case .star:
                outputs += table.columns.map { OutputColumn(name: $0.name, column: $0, cast: nil) }
            case .column(let name, let alias, let cast):
                if name == "count", table.column(named: "count") == nil, request.select.count == 1 {
                    outputs.append(OutputColumn(name: alias ?? name, column: Column("count", .integer), cast: nil))
                } else {
                    // The parser refuses a cast here (`parseEmbed`): the database builds the embedded row's JSON.
                    guard cast == nil else { throw CaravanError(.unsupportedEmbedding, "A cast inside the embedded resource '\(request.name)' is not supported yet") }
                    let column = try table.resolveColumn(name)
                    outputs.append(OutputColumn(name: alias ?? column.jsonPath?.outputName(column: column.name) ?? name, column: column, cast: nil))
                }
            case .aggregate(let aggregate):
                outputs.append(try ReadPlan.aggregateOutput(aggregate, table: table))
            case .embed(let nested):
                let resolved = try resolve(nested, parent: table, path: path + "." + nested.name, depth: depth + 1)
                outputs += resolved.outputs
                if let condition = resolved.innerCondition { inner.append(condition) }
            }
        }
        return (outputs, inner)
    }

    /// The embed's `order` as asked.
    private func explicitOrder(_ embeddedQuery: Query, table: TableSchema) throws(CaravanError) -> [ResolvedOrder] {
        try embeddedQuery.order.map { term throws(CaravanError) in
            ResolvedOrder(column: try table.requireColumn(term.column), direction: term.direction, nulls: term.effectiveNulls)
        }
    }

    /// The embed's `order`, else its key, so the array's order is stable.
    private func order(_ embeddedQuery: Query, table: TableSchema) throws(CaravanError) -> [ResolvedOrder] {
        var order = try explicitOrder(embeddedQuery, table: table)
        if order.isEmpty {
            for key in table.primaryKey { order.append(ResolvedOrder(column: try table.requireColumn(key), direction: .ascending, nulls: .last)) }
        }
        return order
    }

    /// `table.a = parent.b AND …` for the column pairs of a foreign key.
    private func join(_ pairs: [(embedded: String, parent: String)], table: TableSchema, parent: TableSchema) throws(CaravanError) -> BoundPredicate {
        .and(try pairs.map { pair throws(CaravanError) -> BoundPredicate in
            let parentColumn = try parent.requireColumn(pair.parent)
            return .compareColumns(try table.requireColumn(pair.embedded), .eq, Column(parentColumn.name, parentColumn.type, qualifier: parent.name))
        })
    }

    private func candidates(table: TableSchema, parent: TableSchema) throws(CaravanError) -> [Relationship] {
        var found: [Relationship] = []
        for key in parent.foreignKeys where key.referencedTable == table.name {
            found.append(Relationship(join: try join(Array(zip(key.referencedColumns, key.columns)), table: table, parent: parent), cardinality: .one,
                                      columns: Set(key.columns + key.referencedColumns), keyColumns: key.columns,
                                      description: "many-to-one using \(parent.name)(\(key.columns.joined(separator: ", "))) and \(table.name)(\(key.referencedColumns.joined(separator: ", ")))"))
        }
        for key in table.foreignKeys where key.referencedTable == parent.name {
            let unique = Set(table.primaryKey) == Set(key.columns) || table.uniques.contains { Set($0) == Set(key.columns) }
            found.append(Relationship(join: try join(Array(zip(key.columns, key.referencedColumns)), table: table, parent: parent),
                                      cardinality: unique ? .one : .many, columns: Set(key.columns + key.referencedColumns), keyColumns: key.columns,
                                      description: "\(unique ? "one-to-one" : "one-to-many") using \(table.name)(\(key.columns.joined(separator: ", "))) and \(parent.name)(\(key.referencedColumns.joined(separator: ", ")))"))
        }
        for junction in context.tables where junction.name != table.name && junction.name != parent.name {
            let inKey = { (key: ForeignKey) in Set(key.columns).isSubset(of: Set(junction.primaryKey)) }
            for toParent in junction.foreignKeys where toParent.referencedTable == parent.name && inKey(toParent) {
                for toTable in junction.foreignKeys where toTable.referencedTable == table.name && inKey(toTable) {
                    let through = try join(Array(zip(toParent.columns, toParent.referencedColumns)), table: junction, parent: parent)
                    let reaches = try join(Array(zip(toTable.columns, toTable.referencedColumns)), table: junction, parent: table)
                    let visible = try context.readRule(junction)
                    found.append(Relationship(join: .existsUnaliased(junction, .and([through, reaches, visible])), cardinality: .many,
                                              columns: Set([junction.name] + toParent.columns + toTable.columns), keyColumns: [junction.name],
                                              description: "many-to-many using \(junction.name)"))
                }
            }
        }
        return found
    }

    /// PGRST200 as PostgREST words it: what was searched in `details`, and in `hint` the related table whose name is
    /// closest to the one asked for ("Perhaps you meant 'reviews' instead of 'review'."), when one is close.
    private func noRelationship(parent: TableSchema, table name: String, hint: String?) -> CaravanError {
        let searched = hint.map { " using the hint '\($0)'" } ?? ""
        let related = context.tables.filter { candidate in candidate.name != parent.name && (try? candidates(table: candidate, parent: parent))?.isEmpty == false }
        let suggestion = hint == nil ? FuzzyName.closest(to: name, among: related.map(\.name)) : nil
        return CaravanError(.unsupportedEmbedding, "Could not find a relationship between '\(parent.name)' and '\(name)' in the schema cache",
                            details: "Searched for a foreign key relationship between '\(parent.name)' and '\(name)'\(searched) in the schema 'public', but no matches were found.",
                            hint: suggestion.map { "Perhaps you meant '\($0)' instead of '\(name)'." })
    }

    /// The one relationship between `parent` and `table` that `request` means; PGRST200 when there is none,
    /// PGRST201 when several fit and no hint chooses.
    private func relationship(of request: EmbedRequest, table: TableSchema, parent: TableSchema) throws(CaravanError) -> Relationship {
        var candidates = try candidates(table: table, parent: parent)
        if let hint = request.hint {
            candidates = candidates.filter { $0.columns.contains(hint) }
        }
        switch candidates.count {
        case 0:
            throw noRelationship(parent: parent, table: table.name, hint: request.hint)
        case 1:
            return candidates[0]
        default:
            let options = candidates.enumerated().map { index, candidate in
                let others = candidates.enumerated().filter { $0.offset != index }.map(\.element.columns)
                let hint = candidate.keyColumns.first { column in !others.contains { $0.contains(column) } } ?? candidate.keyColumns[0]
                return "'\(table.name)!\(hint)'"
            }
            throw CaravanError(.ambiguousEmbedding, "Could not embed because more than one relationship was found for '\(parent.name)' and '\(table.name)'",
                               details: candidates.map(\.description).joined(separator: "; "),
                               hint: "Try changing '\(table.name)' to one of the following: \(options.joined(separator: ", ")). Find the desired relationship in the 'details' key.")
        }
    }
}

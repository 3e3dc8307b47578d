import CaravanCore
import HTTPTypes
import Hummingbird
import NIOCore

/// `POST`/`PATCH`/`DELETE /rest/v1/:table`: inserts (and upserts), updates and deletes through the write pipeline.
extension RESTController {
    /// What every write request starts from: the caller, the table, the preferences and the representation asked for.
    struct WriteRequest: Sendable {
        let access: AccessContext
        let table: TableSchema
        let preferences: Preferences
        let media: ReadMediaType
        let parameters: QueryString
        let outputs: [OutputColumn]
        /// The `select=` and embedded resources' parameters, when the representation embeds: the written rows are
        /// then read again, in the write's transaction, with their embeds.
        let embeddedRead: Query?

        /// Whether the response must be one object, so the transaction must affect exactly one row.
        var single: Bool { media.isSingleObject && preferences.returning == .representation }
    }

    func writeRequest(_ request: Request, _ context: CaravanRequestContext) throws -> WriteRequest {
        let access = try self.access(context)
        let table = try catalog.requireExposedTable(context.parameters.require("table"))
        try checkProfile(request, Self.contentProfileField)
        let parameters = QueryString(request.uri.query ?? "")
        let items = try parameters.last("select").map(QueryParser.parseSelect) ?? [.star]
        var embeddedRead: Query?
        let readAgain = items.contains { item in
            switch item {
            case .embed: true
            case .column(let name, _, _): name.contains("->")
            case .star, .aggregate: false
            }
        }
        if readAgain {
            var query = try QueryParser.parseRead(parameters, limits: limits)
            query.filters = []
            query.order = []
            query.limit = nil
            query.offset = nil
            embeddedRead = query
        }
        let outputs = try ReadPlan(table: table, query: embeddedRead ?? Query(select: items), access: .constant(true), maxRows: nil,
                                   includeCount: false, embedding: embedding(for: access)).outputs
        return WriteRequest(
            access: access, table: table, preferences: try Preferences(request.headers[values: Self.preferField]),
            media: try ReadMediaType.negotiate(request.headers[.accept]), parameters: parameters, outputs: outputs,
            embeddedRead: embeddedRead
        )
    }

    /// Runs one write in the pipeline; a singular response that would not hold exactly one row rolls it back. When
    /// the representation embeds, the written rows are read again with their embeds in the same transaction (a delete
    /// reads them before: `deleteEmbedding`).
    /// `limitsAffected` (PATCH, DELETE) applies `max-affected`: a write past it is refused and rolled back.
    func perform(_ write: WriteRequest, limitsAffected: Bool = false,
                 _ body: @escaping @Sendable (any StoreTransaction) async throws -> WriteOutcome) async throws -> WriteOutcome {
        let single = write.single
        let preferences = write.preferences
        let embedding = write.embeddedRead.map { ($0, self.embedding(for: write.access)) }
        let representation = write.preferences.returning == .representation
        return try await services.pipeline.run(write.access, rollback: write.preferences.rollback) { transaction in
            var outcome = try await body(transaction)
            if single, outcome.rows.count != 1 { throw Self.singularityError(outcome.rows.count) }
            if limitsAffected { try preferences.checkMaxAffected(outcome.rows.count) }
            if representation, let (query, context) = embedding, !outcome.rows.isEmpty {
                outcome.rows = try await Self.readAgain(outcome.rows, of: write.table, query: query, embedding: context, in: transaction)
            }
            return outcome
        }
    }

    /// `rows` (just written) read again by key with `query`'s outputs and embeds, in their order. The result rows
    /// are in output order, not table order: `writeResponse` takes them as they are (`WriteOutcome.rows` then holds
    /// outputs).
    static func readAgain(_ rows: [[Value]], of table: TableSchema, query: Query, embedding: EmbeddingContext,
                          in transaction: any StoreTransaction) async throws -> [[Value]] {
        let keyColumns = try table.primaryKey.map { try table.requireColumn($0) }
        let keys = rows.map { row in keyColumns.map { column in table.position(of: column.name).map { row[$0] } ?? .null } }
        let byKey: BoundPredicate = .or(keys.map { key in .and(zip(keyColumns, key).map { .compare($0, .eq, $1) }) })
        let found = try await keyedRead(of: table, query: query, access: byKey, embedding: embedding, in: transaction)
        return keys.compactMap { found[$0] }
    }

    /// `query` (its filters, outputs and embeds) read under `access`: each row's outputs by its primary key.
    static func keyedRead(of table: TableSchema, query: Query, access: BoundPredicate, embedding: EmbeddingContext,
                          in transaction: any StoreTransaction) async throws -> [[Value]: [Value]] {
        let keyColumns = try table.primaryKey.map { try table.requireColumn($0) }
        var keyed = query
        keyed.select = query.select + keyColumns.map { .column(name: $0.name, alias: "caravan_key_\($0.name)", cast: nil) }
        let plan = try ReadPlan(table: table, query: keyed, access: access, maxRows: nil, includeCount: false, embedding: embedding)
        let read = try await transaction.fetch(plan)
        let width = plan.outputs.count - keyColumns.count
        var found: [[Value]: [Value]] = [:]
        for row in read.rows { found[Array(row.suffix(keyColumns.count))] = Array(row.prefix(width)) }
        return found
    }

    /// A DELETE whose representation embeds: as PostgreSQL's `DELETE … RETURNING` in PostgREST's statement, the
    /// embeds show the rows as they were, so the rows the filter names are read (under the caller's select policy)
    /// with their embeds before the delete, and the deleted ones are answered from that read, in the delete's order.
    func deleteEmbedding(_ write: WriteRequest, query: Query, filter: BoundPredicate) async throws -> WriteOutcome {
        let table = write.table
        let context = embedding(for: write.access)
        let single = write.single
        let preferences = write.preferences
        return try await services.pipeline.run(write.access, rollback: write.preferences.rollback) { transaction in
            let before = try await Self.keyedRead(of: table, query: query, access: try transaction.access.readRule(table), embedding: context, in: transaction)
            var outcome = try await transaction.delete(from: table, where: filter)
            if single, outcome.rows.count != 1 { throw Self.singularityError(outcome.rows.count) }
            try preferences.checkMaxAffected(outcome.rows.count)
            let positions = table.primaryKey.map { table.position(of: $0) }
            outcome.rows = outcome.rows.compactMap { row in before[positions.map { $0.map { row[$0] } ?? .null }] }
            return outcome
        }
    }

    func insert(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let write = try writeRequest(request, context)
        let table = write.table
        let body = try await Self.jsonBody(request, context)
        let columns = try write.parameters.last("columns").map(QueryParser.parseColumnList)
        let rows = try RowDecoder(table: table, columns: columns, missingIsDefault: write.preferences.missingDefault).rows(from: body)
        let conflict: ConflictTarget?
        if let resolution = write.preferences.resolution {
            let columns = try write.parameters.last("on_conflict").map(QueryParser.parseColumnList) ?? table.primaryKey
            try Self.requireUniqueKey(columns, of: table)
            conflict = ConflictTarget(columns: columns, resolution: resolution)
        } else {
            conflict = nil
        }
        let outcome = try await perform(write) { try await $0.insert(rows, into: table, conflict: conflict) }
        let status: HTTPResponse.Status = (conflict?.resolution == .merge && outcome.inserted == 0 && outcome.updated > 0) ? .ok : .created
        let affected = outcome.inserted + outcome.updated
        var response = try writeResponse(outcome.rows, write, status: status, contentRange: "*/\(write.preferences.count ? String(affected) : "*")", isInsert: true)
        if write.preferences.returning == .headersOnly, let first = outcome.rows.first {
            response.headers[.location] = Self.location(of: first, in: table)
        }
        return response
    }

    func update(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let write = try writeRequest(request, context)
        let table = write.table
        let filter = try Self.requireFilter(try QueryParser.parseRead(write.parameters, limits: limits), table: table, verb: "UPDATE")
        let body = try await Self.jsonBody(request, context)
        guard case .object = body else { throw CaravanError(.malformedBody, "Empty or invalid json", details: "PATCH takes one JSON object") }
        let columns = try write.parameters.last("columns").map(QueryParser.parseColumnList)
        let values = try RowDecoder(table: table, columns: columns, missingIsDefault: true).rows(from: body)[0]
        let outcome = try await perform(write, limitsAffected: true) { try await $0.update(table, set: values, where: filter) }
        let count = outcome.rows.count
        let range = count == 0 ? "*" : "0-\(count - 1)"
        return try writeResponse(outcome.rows, write, status: .ok, contentRange: "\(range)/\(write.preferences.count ? String(count) : "*")")
    }

    func delete(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let write = try writeRequest(request, context)
        let table = write.table
        let read = try QueryParser.parseRead(write.parameters, limits: limits)
        let filter = try Self.requireFilter(read, table: table, verb: "DELETE")
        let outcome: WriteOutcome
        if let embedded = write.embeddedRead, write.preferences.returning == .representation {
            var query = embedded
            query.filters = read.filters
            outcome = try await deleteEmbedding(write, query: query, filter: filter)
        } else {
            outcome = try await perform(write, limitsAffected: true) { try await $0.delete(from: table, where: filter) }
        }
        return try writeResponse(outcome.rows, write, status: .ok, contentRange: "*/\(write.preferences.count ? String(outcome.rows.count) : "*")")
    }

    /// 204 (or 201 for inserts) with no body for `return=minimal`; the affected rows for `return=representation`.
    func writeResponse(_ rows: [[Value]], _ write: WriteRequest, status: HTTPResponse.Status, contentRange: String,
                               isInsert: Bool = false) throws(CaravanError) -> Response {
        guard write.preferences.returning == .representation else {
            // POST keeps its 201 (or 200 for an upsert that only updated); PATCH and DELETE answer 204.
            return Self.response(status: status == .ok && !isInsert ? .noContent : status, media: nil, body: [], contentRange: contentRange)
        }
        let table = write.table
        let projected = write.embeddedRead != nil ? rows
            : rows.map { row in write.outputs.map { output in table.position(of: output.column.name).map { row[$0] } ?? .null } }
        let body = try Self.encode(ReadResult(outputs: write.outputs, rows: projected, totalCount: nil), media: write.media)
        return Self.response(status: status, media: write.media, body: body, contentRange: contentRange)
    }

    static func location(of row: [Value], in table: TableSchema) -> String {
        let parts = table.primaryKey.compactMap { name -> String? in
            guard let position = table.position(of: name) else { return nil }
            let text: String
            switch row[position] {
            case .text(let s): text = s
            case .integer(let i): text = String(i)
            case .double(let d): text = String(d)
            case .bool(let b): text = b ? "true" : "false"
            case .null, .json: return nil
            }
            return "\(name)=eq.\(text.addingPercentEncodingForQuery())"
        }
        return "/\(table.name)?\(parts.joined(separator: "&"))"
    }

    /// `on_conflict` must name the primary key or a UNIQUE column set (42P10 otherwise).
    static func requireUniqueKey(_ columns: [String], of table: TableSchema) throws(CaravanError) {
        for name in columns { _ = try table.requireColumn(name) }
        guard table.isUniqueKey(columns) else {
            throw CaravanError(.invalidConflictTarget, "there is no unique or exclusion constraint matching the ON CONFLICT specification")
        }
    }

    /// The filters of a PATCH or DELETE; refused when there are none (like Supabase's safeupdate).
    static func requireFilter(_ query: Query, table: TableSchema, verb: String) throws(CaravanError) -> BoundPredicate {
        guard !query.filters.isEmpty else {
            throw CaravanError(.missingFilter, "\(verb) requires a WHERE clause",
                               hint: "Add a filter; to affect every row say so explicitly, e.g. ?\(table.primaryKey.first ?? "id")=not.is.null")
        }
        for term in query.order { _ = try table.requireColumn(term.column) }
        if query.limit != nil || query.offset != nil {
            throw CaravanError(.parseError, "\"limit and offset are not supported on \(verb == "UPDATE" ? "PATCH" : "DELETE")\" (line 1, column 1)")
        }
        return try query.filter.bound(to: table)
    }
}

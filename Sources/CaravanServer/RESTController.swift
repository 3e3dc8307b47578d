import CaravanCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// `/rest/v1`: PostgREST reads, writes and RPC over the storage port and the write pipeline.
struct RESTController {
    let services: CaravanServices
    let maxRows: Int?

    static let preferField = HTTPField.Name("Prefer")!
    static let acceptProfileField = HTTPField.Name("Accept-Profile")!
    static let contentProfileField = HTTPField.Name("Content-Profile")!
    static let contentRangeField = HTTPField.Name("Content-Range")!
    static let preferenceAppliedField = HTTPField.Name("Preference-Applied")!
    /// Largest request body accepted (bulk imports use the CLI).
    static let maxBodyBytes = 16 * 1024 * 1024

    var catalog: Catalog { services.catalog }

    func register(on router: Router<CaravanRequestContext>) {
        router.get("/rest/v1/rpc/:function") { request, context in await self.respond(context, includeBody: true) { try await self.rpc(request, context, viaGet: true) } }
        router.head("/rest/v1/rpc/:function") { request, context in await self.respond(context, includeBody: false) { try await self.rpc(request, context, viaGet: true) } }
        router.post("/rest/v1/rpc/:function") { request, context in await self.respond(context, includeBody: true) { try await self.rpc(request, context, viaGet: false) } }
        for method in [HTTPRequest.Method.put, .patch, .delete] {
            router.on("/rest/v1/rpc/:function", method: method) { _, context in
                await self.respond(context, includeBody: true) { throw CaravanError(.methodNotAllowed, "Only GET, HEAD and POST are allowed for functions") }
            }
        }
        router.get("/rest/v1/:table") { request, context in await self.respond(context, includeBody: true) { try await self.read(request, context) } }
        router.head("/rest/v1/:table") { request, context in await self.respond(context, includeBody: false) { try await self.read(request, context) } }
        router.post("/rest/v1/:table") { request, context in await self.respond(context, includeBody: true) { try await self.insert(request, context) } }
        router.patch("/rest/v1/:table") { request, context in await self.respond(context, includeBody: true) { try await self.update(request, context) } }
        router.delete("/rest/v1/:table") { request, context in await self.respond(context, includeBody: true) { try await self.delete(request, context) } }
        router.put("/rest/v1/:table") { _, context in
            await self.respond(context, includeBody: true) { throw CaravanError(.methodNotAllowed, "PUT is not supported; use POST with Prefer: resolution=merge-duplicates") }
        }
    }

    /// Runs a handler and turns any error into the PostgREST error response; HEAD responses lose their body.
    private func respond(_ context: CaravanRequestContext, includeBody: Bool, _ handler: () async throws -> Response) async -> Response {
        var response: Response
        do {
            response = try await handler()
        } catch {
            response = PostgRESTError.response(for: error, role: context.identity?.role, logger: context.logger)
        }
        if !includeBody { response.body = ResponseBody() }
        return response
    }

    // MARK: Reads

    func read(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let access = try self.access(context)
        let table = try catalog.requireExposedTable(context.parameters.get("table") ?? "")
        try checkProfile(request, Self.acceptProfileField)
        let media = try ReadMediaType.negotiate(request.headers[.accept])
        let preferences = try Preferences(request.headers[values: Self.preferField])
        let query = try QueryParser.parseRead(QueryString(request.uri.query ?? ""))
        let plan = try ReadPlan(table: table, query: query, access: try access.readRule(table), maxRows: maxRows, includeCount: preferences.count)
        let result = try await services.store.fetch(plan)
        return try Self.readResponse(result, offset: plan.offset, media: media)
    }

    static func readResponse(_ result: ReadResult, offset: Int, media: ReadMediaType) throws(CaravanError) -> Response {
        let count = result.rows.count
        if let total = result.totalCount, offset > 0, offset > total {
            throw CaravanError(.invalidRange, "Requested range not satisfiable",
                               details: "An offset of \(offset) was requested, but there are only \(total) rows.")
        }
        let range = count == 0 ? "*" : "\(offset)-\(offset + count - 1)"
        var status: HTTPResponse.Status = .ok
        if let total = result.totalCount, count < total, media != .singleObject { status = .partialContent }
        let body = try encode(result, media: media)
        return response(status: status, media: media, body: body, contentRange: "\(range)/\(result.totalCount.map(String.init) ?? "*")")
    }

    static func encode(_ result: ReadResult, media: ReadMediaType) throws(CaravanError) -> [UInt8] {
        switch media {
        case .jsonArray: return ResultEncoder.jsonArray(result)
        case .csv: return result.csv
        case .singleObject:
            guard result.rows.count == 1 else { throw singularityError(result.rows.count) }
            return ResultEncoder.object(result.rows[0], outputs: result.outputs)
        }
    }

    static func singularityError(_ count: Int) -> CaravanError {
        CaravanError(.singularityViolation, "Cannot coerce the result to a single JSON object", details: "The result contains \(count) rows")
    }

    static func response(status: HTTPResponse.Status, media: ReadMediaType?, body: [UInt8], contentRange: String?) -> Response {
        var headers: HTTPFields = [:]
        if let media, !body.isEmpty { headers[.contentType] = media.contentType }
        if let contentRange { headers[contentRangeField] = contentRange }
        headers[.contentLength] = String(body.count)
        return Response(status: status, headers: headers, body: body.isEmpty ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    // MARK: Writes

    /// What every write request starts from: the caller, the table, the preferences and the representation asked for.
    struct WriteRequest: Sendable {
        let access: AccessContext
        let table: TableSchema
        let preferences: Preferences
        let media: ReadMediaType
        let parameters: QueryString
        let outputs: [OutputColumn]

        /// Whether the response must be one object, so the transaction must affect exactly one row.
        var single: Bool { media == .singleObject && preferences.returning == .representation }
    }

    private func writeRequest(_ request: Request, _ context: CaravanRequestContext) throws(CaravanError) -> WriteRequest {
        let access = try self.access(context)
        let table = try catalog.requireExposedTable(context.parameters.get("table") ?? "")
        try checkProfile(request, Self.contentProfileField)
        let parameters = QueryString(request.uri.query ?? "")
        return WriteRequest(
            access: access, table: table, preferences: try Preferences(request.headers[values: Self.preferField]),
            media: try ReadMediaType.negotiate(request.headers[.accept]), parameters: parameters,
            outputs: try Self.outputs(for: table, select: parameters.last("select"))
        )
    }

    /// Runs one write in the pipeline; a singular response that would not hold exactly one row rolls it back.
    private func perform(_ write: WriteRequest, _ body: @escaping @Sendable (any StoreTransaction) throws -> WriteOutcome) async throws -> WriteOutcome {
        let single = write.single
        return try await services.pipeline.run(write.access, rollback: write.preferences.rollback) { transaction in
            let outcome = try body(transaction)
            if single, outcome.rows.count != 1 { throw Self.singularityError(outcome.rows.count) }
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
        let outcome = try await perform(write) { try $0.insert(rows, into: table, conflict: conflict) }
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
        let filter = try Self.requireFilter(try QueryParser.parseRead(write.parameters), table: table, verb: "UPDATE")
        let body = try await Self.jsonBody(request, context)
        guard case .object = body else { throw CaravanError(.malformedBody, "Empty or invalid json", details: "PATCH takes one JSON object") }
        let columns = try write.parameters.last("columns").map(QueryParser.parseColumnList)
        let values = try RowDecoder(table: table, columns: columns, missingIsDefault: true).rows(from: body)[0]
        let outcome = try await perform(write) { try $0.update(table, set: values, where: filter) }
        let count = outcome.rows.count
        let range = count == 0 ? "*" : "0-\(count - 1)"
        return try writeResponse(outcome.rows, write, status: .ok, contentRange: "\(range)/\(write.preferences.count ? String(count) : "*")")
    }

    func delete(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let write = try writeRequest(request, context)
        let table = write.table
        let filter = try Self.requireFilter(try QueryParser.parseRead(write.parameters), table: table, verb: "DELETE")
        let outcome = try await perform(write) { try $0.delete(from: table, where: filter) }
        return try writeResponse(outcome.rows, write, status: .ok, contentRange: "*/\(write.preferences.count ? String(outcome.rows.count) : "*")")
    }

    /// 204 (or 201 for inserts) with no body for `return=minimal`; the affected rows for `return=representation`.
    private func writeResponse(_ rows: [[Value]], _ write: WriteRequest, status: HTTPResponse.Status, contentRange: String,
                               isInsert: Bool = false) throws(CaravanError) -> Response {
        guard write.preferences.returning == .representation else {
            // POST keeps its 201 (or 200 for an upsert that only updated); PATCH and DELETE answer 204.
            return Self.response(status: status == .ok && !isInsert ? .noContent : status, media: nil, body: [], contentRange: contentRange)
        }
        let table = write.table
        let projected = rows.map { row in write.outputs.map { output in table.position(of: output.column.name).map { row[$0] } ?? .null } }
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

    // MARK: RPC

    /// What an RPC call produced, ready to encode.
    enum RPCReply: Sendable {
        case scalar(Value)
        case rows(ReadResult, offset: Int)
        case void
    }

    func rpc(_ request: Request, _ context: CaravanRequestContext, viaGet: Bool) async throws -> Response {
        let access = try self.access(context)
        let function = try catalog.requireFunction(context.parameters.get("function") ?? "")
        try checkProfile(request, viaGet ? Self.acceptProfileField : Self.contentProfileField)
        if viaGet, !function.isReadOnly {
            throw CaravanError(.methodNotAllowed, "Cannot call a function that writes with GET", hint: "Use POST")
        }
        let media = try ReadMediaType.negotiate(request.headers[.accept])
        let preferences = try Preferences(request.headers[values: Self.preferField])
        let parameters = QueryString(request.uri.query ?? "")
        var given: [String: JSONValue] = [:]
        var resultQuery = parameters
        if viaGet {
            let names = Set(function.parameters.map(\.name))
            var filters: [QueryString.Pair] = []
            for pair in parameters.pairs {
                if names.contains(pair.key) {
                    given[pair.key] = .string(pair.value)
                } else if QueryParser.reservedKeys.contains(pair.key) || pair.key.contains(".") || (try? QueryParser.parseFilter(column: pair.key, value: pair.value)) != nil {
                    filters.append(pair)
                } else {
                    given[pair.key] = .string(pair.value)
                }
            }
            resultQuery = QueryString(pairs: filters)
        } else {
            let buffer = try await request.body.collect(upTo: Self.maxBodyBytes)
            if buffer.readableBytes > 0 {
                guard case .object(let pairs) = try JSONParser.parse(bytes: Array(buffer: buffer)) else {
                    throw CaravanError(.malformedBody, "Empty or invalid json", details: "RPC arguments must be a JSON object")
                }
                for (key, value) in pairs { given[key] = value }
            }
        }
        let arguments = try function.bind(given)
        let query = try QueryParser.parseRead(resultQuery)
        let maxRows = self.maxRows
        let reply = try await services.pipeline.run(access, rollback: preferences.rollback || function.isReadOnly) { transaction -> RPCReply in
            switch try function.body(arguments, transaction) {
            case .scalar(let value): return .scalar(value)
            case .void: return .void
            case .table(let columns, let rows):
                let (result, offset) = try InMemoryQuery.apply(query, columns: columns, rows: rows, includeCount: preferences.count, maxRows: maxRows)
                if media == .singleObject, result.rows.count != 1 { throw Self.singularityError(result.rows.count) }
                return .rows(result, offset: offset)
            case .rows(let table, let base):
                let plan = try ReadPlan(table: table, query: query, access: .both(base, try transaction.access.readRule(table)),
                                        maxRows: maxRows, includeCount: preferences.count)
                let result = try transaction.fetch(plan)
                if media == .singleObject, result.rows.count != 1 { throw Self.singularityError(result.rows.count) }
                return .rows(result, offset: plan.offset)
            }
        }
        switch reply {
        case .void:
            return Self.response(status: .noContent, media: nil, body: [], contentRange: nil)
        case .scalar(let value):
            var writer = JSONWriter()
            writer.write(value)
            return Self.response(status: .ok, media: .jsonArray, body: writer.bytes, contentRange: nil)
        case .rows(let result, let offset):
            return try Self.readResponse(result, offset: offset, media: media)
        }
    }

    // MARK: Helpers

    private func access(_ context: CaravanRequestContext) throws(CaravanError) -> AccessContext {
        guard let identity = context.identity else { throw CaravanError(.missingCredentials, "No API key found in request") }
        return catalog.access(for: identity)
    }

    private func checkProfile(_ request: Request, _ field: HTTPField.Name) throws(CaravanError) {
        if let profile = request.headers[field], profile != "public" {
            throw CaravanError(.invalidSchema, "Invalid schema: \(profile.prefix(64))", hint: "Only the following schemas are exposed: public")
        }
    }

    static func jsonBody(_ request: Request, _ context: CaravanRequestContext) async throws -> JSONValue {
        let buffer = try await request.body.collect(upTo: maxBodyBytes)
        return try JSONParser.parse(bytes: Array(buffer: buffer))
    }

    /// The output columns of `select=` (all columns by default) for a write's representation.
    static func outputs(for table: TableSchema, select: String?) throws(CaravanError) -> [OutputColumn] {
        let items = try select.map(QueryParser.parseSelect) ?? [.star]
        return try ReadPlan(table: table, query: Query(select: items), access: .constant(true), maxRows: nil, includeCount: false).outputs
    }

    /// `on_conflict` must name the primary key or a UNIQUE column set (42P10 otherwise).
    static func requireUniqueKey(_ columns: [String], of table: TableSchema) throws(CaravanError) {
        for name in columns { _ = try table.requireColumn(name) }
        let keys = [table.primaryKey] + table.uniques
        guard keys.contains(where: { Set($0) == Set(columns) }) else {
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

/// The `Prefer` preferences (values comma-separated, possibly in several headers).
struct Preferences {
    enum Returning { case minimal, representation, headersOnly }

    var count = false
    var returning = Returning.minimal
    var resolution: ConflictTarget.Resolution?
    var missingDefault = false
    var rollback = false

    init(_ headers: [String]) throws(CaravanError) {
        var strict = false
        var unknown: [String] = []
        for header in headers {
            for item in header.split(separator: ",") {
                switch String(item).trimmingSpaces {
                case "count=exact", "count=planned", "count=estimated": count = true
                case "return=minimal": returning = .minimal
                case "return=representation": returning = .representation
                case "return=headers-only": returning = .headersOnly
                case "resolution=merge-duplicates": resolution = .merge
                case "resolution=ignore-duplicates": resolution = .ignore
                case "missing=default": missingDefault = true
                case "missing=null": missingDefault = false
                case "tx=rollback": rollback = true
                case "tx=commit": rollback = false
                case "handling=strict": strict = true
                case "handling=lenient": strict = false
                case let other: unknown.append(other)
                }
            }
        }
        if strict, !unknown.isEmpty {
            throw CaravanError(.invalidPreference, "Invalid preferences given with handling=strict", details: "Invalid preferences: \(unknown.joined(separator: ", "))")
        }
    }
}

extension String {
    /// Percent-encodes everything but unreserved characters (RFC 3986), for a query value.
    func addingPercentEncodingForQuery() -> String {
        var out = ""
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
            }
        }
        return out
    }
}

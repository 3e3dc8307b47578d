import CaravanCore
import HTTPTypes
import Hummingbird
import NIOCore

/// `GET`/`HEAD /rest/v1/:table`: reads, and the response encoding reads and RPC share.
extension RESTController {
    func read(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let access = try self.access(context)
        let table = try catalog.requireExposedTable(context.parameters.require("table"))
        try checkProfile(request, Self.acceptProfileField)
        let media = try ReadMediaType.negotiate(request.headers[.accept])
        let preferences = try Preferences(request.headers[values: Self.preferField])
        let query = try QueryParser.parseRead(QueryString(request.uri.query ?? ""), limits: limits)
        let plan = try ReadPlan(table: table, query: query, access: try access.readRule(table), maxRows: maxRows, includeCount: preferences.count,
                                embedding: embedding(for: access), aggregates: aggregatesEnabled)
        try await services.pipeline.prepareRead(of: [table.name] + plan.embeddedTables, catalog: catalog)
        let result = try await services.store.routedFetch(plan, routing: try await routing(request, context))
        return try Self.readResponse(result, offset: plan.offset, media: media)
    }

    /// How embedded resources resolve for `access`: the exposed tables, under the caller's select policies.
    func embedding(for access: AccessContext) -> EmbeddingContext {
        let catalog = self.catalog
        return EmbeddingContext(table: { name in try? catalog.requireExposedTable(name) }, tables: catalog.exposedTables,
                                readRule: { table throws(CaravanError) in try access.readRule(table) }, dialect: services.store.dialect)
    }

    static func readResponse(_ result: ReadResult, offset: Int, media: ReadMediaType) throws(CaravanError) -> Response {
        let count = result.rows.count
        if let total = result.totalCount, offset > 0, offset > total {
            throw CaravanError(.invalidRange, "Requested range not satisfiable",
                               details: "An offset of \(offset) was requested, but there are only \(total) rows.")
        }
        let range = count == 0 ? "*" : "\(offset)-\(offset + count - 1)"
        var status: HTTPResponse.Status = .ok
        if let total = result.totalCount, count < total, !media.isSingleObject { status = .partialContent }
        let body = try encode(result, media: media)
        return response(status: status, media: media, body: body, contentRange: "\(range)/\(result.totalCount.map(String.init) ?? "*")")
    }

    static func encode(_ result: ReadResult, media: ReadMediaType) throws(CaravanError) -> [UInt8] {
        switch media.kind {
        case .jsonArray: return media.finish(ResultEncoder.jsonArray(result))
        case .csv: return result.csv
        case .singleObject:
            guard result.rows.count == 1 else { throw singularityError(result.rows.count) }
            return media.finish(ResultEncoder.object(result.rows[0], outputs: result.outputs))
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
}

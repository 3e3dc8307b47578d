import CaravanCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// `/rest/v1/{table}` reads: the PostgREST grammar over the storage port.
struct RESTController {
    let store: any Store
    let catalog: Catalog
    let maxRows: Int?

    static let preferField = HTTPField.Name("Prefer")!
    static let acceptProfileField = HTTPField.Name("Accept-Profile")!
    static let contentRangeField = HTTPField.Name("Content-Range")!

    func register(on router: Router<CaravanRequestContext>) {
        router.get("/rest/v1/:table") { request, context in
            await self.read(request, context: context, includeBody: true)
        }
        router.head("/rest/v1/:table") { request, context in
            await self.read(request, context: context, includeBody: false)
        }
    }

    func read(_ request: Request, context: CaravanRequestContext, includeBody: Bool) async -> Response {
        let role = context.identity?.role
        do {
            guard let identity = context.identity else {
                throw CaravanError(.missingCredentials, "No API key found in request")
            }
            let tableName = context.parameters.get("table") ?? ""
            let table = try catalog.requireExposedTable(tableName)
            if let profile = request.headers[Self.acceptProfileField], profile != "public" {
                throw CaravanError(.invalidSchema, "Invalid schema: \(profile.prefix(64))", hint: "Only the following schemas are exposed: public")
            }
            let media = try ReadMediaType.negotiate(request.headers[.accept])
            let preferences = Preferences(request.headers[values: Self.preferField])
            let query = try QueryParser.parseRead(QueryString(request.uri.query ?? ""))
            let plan = try ReadPlan(
                table: table, query: query, access: catalog.readAccess(to: table, for: identity),
                maxRows: maxRows, includeCount: preferences.count
            )
            let result = try await store.fetch(plan)
            return try respond(result, plan: plan, media: media, includeBody: includeBody)
        } catch {
            var response = PostgRESTError.response(for: error, role: role, logger: context.logger)
            if !includeBody { response.body = ResponseBody() }
            return response
        }
    }

    private func respond(_ result: ReadResult, plan: ReadPlan, media: ReadMediaType, includeBody: Bool) throws(CaravanError) -> Response {
        let count = result.rows.count
        if let total = result.totalCount, plan.offset > 0, plan.offset > total {
            throw CaravanError(.invalidRange, "Requested range not satisfiable",
                               details: "An offset of \(plan.offset) was requested, but there are only \(total) rows.")
        }
        let range = count == 0 ? "*" : "\(plan.offset)-\(plan.offset + count - 1)"
        let contentRange = "\(range)/\(result.totalCount.map(String.init) ?? "*")"
        var status: HTTPResponse.Status = .ok
        if let total = result.totalCount, count < total, media != .singleObject {
            status = .partialContent
        }
        let body: [UInt8]
        switch media {
        case .jsonArray:
            body = ResultEncoder.jsonArray(result)
        case .csv:
            body = ResultEncoder.csv(result)
        case .singleObject:
            guard count == 1 else {
                throw CaravanError(.singularityViolation, "Cannot coerce the result to a single JSON object",
                                   details: "The result contains \(count) rows")
            }
            body = ResultEncoder.object(result.rows[0], outputs: result.outputs)
        }
        var headers: HTTPFields = [.contentType: media.contentType, Self.contentRangeField: contentRange]
        headers[.contentLength] = String(body.count)
        return Response(status: status, headers: headers, body: includeBody ? ResponseBody(byteBuffer: ByteBuffer(bytes: body)) : ResponseBody())
    }
}

/// The parts of `Prefer` headers a read uses (values comma-separated, possibly in several headers).
struct Preferences {
    var count = false

    init(_ headers: [String]) {
        for header in headers {
            for item in header.split(separator: ",") {
                let preference = String(item).trimmingSpaces
                if preference == "count=exact" || preference == "count=planned" || preference == "count=estimated" {
                    count = true
                }
            }
        }
    }
}

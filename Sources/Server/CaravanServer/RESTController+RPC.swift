import CaravanCore
import HTTPTypes
import Hummingbird
import NIOCore

/// `/rest/v1/rpc/:function`: calls over GET (read-only functions) and POST.
extension RESTController {
    /// What an RPC call produced, ready to encode.
    enum RPCReply: Sendable {
        case scalar(Value)
        case rows(ReadResult, offset: Int)
        case void
    }

    func rpc(_ request: Request, _ context: CaravanRequestContext, viaGet: Bool) async throws -> Response {
        let access = try self.access(context)
        let name = try context.parameters.require("function")
        if let function = catalog.asyncFunction(named: name) {
            return try await asyncRPC(function, request, context, access: access, viaGet: viaGet)
        }
        let function = try catalog.requireFunction(name)
        try checkProfile(request, viaGet ? Self.acceptProfileField : Self.contentProfileField)
        if viaGet, !function.isReadOnly {
            throw CaravanError(.methodNotAllowed, "Cannot call a function that writes with GET", hint: "Use POST")
        }
        let media = try ReadMediaType.negotiate(request.headers[.accept])
        let preferences = try Preferences(request.headers[values: Self.preferField])
        let parameters = QueryString(request.uri.query ?? "")
        let (given, resultQuery) = try await Self.arguments(request, parameters: parameters, of: function, viaGet: viaGet)
        let arguments = try function.bind(given)
        let query = try QueryParser.parseRead(resultQuery, limits: limits)
        let maxRows = self.maxRows
        let call: @Sendable (any StoreTransaction) async throws -> RPCReply = { transaction in
            let answer = try await function.body(arguments, transaction)
            switch answer {
            case .scalar, .void:
                if preferences.maxAffected != nil {
                    throw CaravanError(.maxAffectedNeedsRows, "Function must return SETOF or TABLE when max-affected preference is used with handling=strict")
                }
            case .rows, .table: break
            }
            switch answer {
            case .scalar(let value): return .scalar(value)
            case .void: return .void
            case .table(let columns, let rows):
                let (result, offset) = try InMemoryQuery.apply(query, columns: columns, rows: rows, includeCount: preferences.count, maxRows: maxRows)
                if media.isSingleObject, result.rows.count != 1 { throw Self.singularityError(result.rows.count) }
                try preferences.checkMaxAffected(result.rows.count)
                return .rows(result, offset: offset)
            case .rows(let table, let base):
                let plan = try ReadPlan(table: table, query: query, access: .both(base, try transaction.access.readRule(table)),
                                        maxRows: maxRows, includeCount: preferences.count)
                let result = try await transaction.fetch(plan)
                if media.isSingleObject, result.rows.count != 1 { throw Self.singularityError(result.rows.count) }
                try preferences.checkMaxAffected(result.rows.count)
                return .rows(result, offset: plan.offset)
            }
        }
        // A read-only function's call may run on a read replica (with the request's consistency token honoured);
        // anything that writes runs on the primary.
        let reply = function.isReadOnly
            ? try await services.pipeline.readOnly(access, routing: try await routing(request, context), call)
            : try await services.pipeline.run(access, rollback: preferences.rollback, call)
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

    /// A call of an asynchronous function (POST; GET too when it only reads): run outside any transaction; a scalar
    /// answer or 204.
    private func asyncRPC(_ function: AsyncRPCFunction, _ request: Request, _ context: CaravanRequestContext, access: AccessContext,
                          viaGet: Bool) async throws -> Response {
        try checkProfile(request, viaGet ? Self.acceptProfileField : Self.contentProfileField)
        if viaGet, !function.isReadOnly { throw CaravanError(.methodNotAllowed, "Cannot call a function that writes with GET", hint: "Use POST") }
        let signature = function.signature
        let (given, _) = try await Self.arguments(request, parameters: QueryString(request.uri.query ?? ""), of: signature, viaGet: viaGet)
        let result = try await function.body(try signature.bind(given), AsyncRPCContext(identity: access.identity, pipeline: services.pipeline, catalog: catalog,
                                                                                                  exportFiles: services.storage))
        switch result {
        case .scalar(let value):
            var writer = JSONWriter()
            writer.write(value)
            return Self.response(status: .ok, media: .jsonArray, body: writer.bytes, contentRange: nil)
        case .void:
            return Self.response(status: .noContent, media: nil, body: [], contentRange: nil)
        case .rows, .table:
            throw CaravanError(.internalFailure, "an asynchronous function answers a scalar or nothing", internalDetail: function.name)
        }
    }

    /// The arguments of a call and the query on its result: over GET, the query string's pairs that name a
    /// parameter (or are no filter) are arguments and the rest filter the result; over POST, the JSON body's members.
    static func arguments(_ request: Request, parameters: QueryString, of function: RPCFunction,
                          viaGet: Bool) async throws -> (given: [String: JSONValue], resultQuery: QueryString) {
        var given: [String: JSONValue] = [:]
        guard viaGet else {
            let buffer = try await request.body(atMost: maxBodyBytes, orElse: tooLarge)
            if buffer.readableBytes > 0 {
                guard case .object(let pairs) = try JSONParser.parse(bytes: Array(buffer: buffer)) else {
                    throw CaravanError(.malformedBody, "Empty or invalid json", details: "RPC arguments must be a JSON object")
                }
                for (key, value) in pairs { given[key] = value }
            }
            return (given, parameters)
        }
        let names = Set(function.parameters.map(\.name))
        var filters: [QueryString.Pair] = []
        for pair in parameters.pairs {
            if names.contains(pair.key) {
                given[pair.key] = .string(pair.value)
            } else if QueryParser.reservedKeys.contains(pair.key) || pair.key.contains(".") || isFilter(pair) {
                filters.append(pair)
            } else {
                given[pair.key] = .string(pair.value)
            }
        }
        return (given, QueryString(pairs: filters))
    }

    /// Whether a query pair parses as a filter (anything else on a GET call is an argument).
    private static func isFilter(_ pair: QueryString.Pair) -> Bool {
        do {
            _ = try QueryParser.parseFilter(column: pair.key, value: pair.value)
            return true
        } catch {
            return false  // not a filter: the pair is an argument, which `bind` checks
        }
    }
}

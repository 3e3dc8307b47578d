import CaravanCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// `/functions/v1/<name>`: the app modules' `EdgeFunction`s, as Supabase's Edge Functions are invoked
/// (`functions.invoke` in supabase-swift and supabase-py): any method, the SDK's `Authorization` and `apikey`
/// headers, the function's own status, headers and body back. An unknown name is 404 `NOT_FOUND` (the edge runtime's
/// answer, through `NotFoundMiddleware`); an error the function throws is JSON, never an empty body.
struct FunctionsController {
    let catalog: Catalog
    let pipeline: WritePipeline
    let logger: Logger

    /// The most bytes of a request body a function receives.
    static let maxBodyBytes = 10 << 20
    static let methods: [HTTPRequest.Method] = [.get, .post, .put, .patch, .delete]

    func register(on router: Router<CaravanRequestContext>) {
        for method in Self.methods {
            for path: RouterPath in ["/functions/v1/:name", "/functions/v1/:name/**"] {
                router.on(path, method: method) { request, context in try await invoke(request, context: context) }
            }
        }
    }

    private func invoke(_ request: Request, context: CaravanRequestContext) async throws -> Response {
        guard let name = context.parameters.get("name"), let function = catalog.edgeFunction(named: name) else {
            throw HTTPError(.notFound)
        }
        do {
            guard let identity = context.identity else { throw CaravanError(.missingCredentials, "No API key found in request") }
            if function.requiresUser, identity.userID == nil {
                throw CaravanError(.invalidToken, "This function needs a signed-in user's access token", hint: "Send Authorization: Bearer <access_token>")
            }
            let buffer = try await request.body(atMost: Self.maxBodyBytes) {
                CaravanError(.payloadTooLarge, "The body is larger than \(Self.maxBodyBytes) bytes")
            }
            let answer = try await function.handler(Self.functionRequest(request, context: context, body: Array(buffer.readableBytesView)),
                                                    FunctionContext(identity: identity, pipeline: pipeline, catalog: catalog))
            return Self.response(answer)
        } catch let error as HTTPError {
            throw error
        } catch let error as CaravanError {
            let (status, _, object) = PostgRESTError.wire(for: error, role: context.identity?.role, logger: logger)
            return AuthController.json(object, status: status)
        } catch {
            logger.error("function failed", metadata: ["function": "\(name)", "error.type": "\(type(of: error))", "error": "\(error)"])
            return AuthController.json(.object([("code", .string("WORKER_ERROR")), ("message", .string("Function exited due to an error (please check logs)"))]),
                                       status: .internalServerError)
        }
    }

    static func functionRequest(_ request: Request, context: CaravanRequestContext, body: [UInt8]) -> FunctionRequest {
        let catchAll = context.parameters.getCatchAll()
        let subpath = catchAll.isEmpty ? "" : "/" + catchAll.joined(separator: "/")
        let query = request.uri.queryParameters.map { (name: String($0.key), value: String($0.value)) }
        let headers = request.headers.map { (name: $0.name.canonicalName, value: $0.value) }
        return FunctionRequest(method: request.method.rawValue, subpath: subpath, query: query, headers: headers, body: body)
    }

    static func response(_ answer: FunctionResponse) -> Response {
        var fields = HTTPFields()
        for (name, value) in answer.headers {
            guard let field = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: field, value: value))
        }
        return Response(status: HTTPResponse.Status(code: answer.status), headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}

/// A function served at `/functions/v1/<name>` as Supabase's Edge Functions are (`functions.invoke` in the SDKs):
/// a Swift handler an app module declares, taking the HTTP request and answering an HTTP response, with the caller's
/// identity and, when it asks, a store transaction as the caller (policies and the change log apply).
///
/// ```swift
/// EdgeFunction("hello") { request, context in
///     let name = try request.json()["name"]?.stringValue ?? "world"
///     return .json(.object([("message", .string("Hello \(name)!"))]))
/// }
/// ```
///
/// Errors the handler throws reach the client as JSON: a `CaravanError` with its status and `{code, message}`,
/// anything else as 500 `WORKER_ERROR` (its detail logged, never sent).
public struct EdgeFunction: Sendable {
    public let name: String
    /// Whether a caller must be signed in (a user's token, not the anon key), as Supabase's `verify_jwt` with RLS
    /// in mind: false lets the anon key call it.
    public let requiresUser: Bool
    public let handler: @Sendable (FunctionRequest, FunctionContext) async throws -> FunctionResponse

    public init(_ name: String, requiresUser: Bool = false,
                handler: @escaping @Sendable (FunctionRequest, FunctionContext) async throws -> FunctionResponse) {
        self.name = name
        self.requiresUser = requiresUser
        self.handler = handler
    }
}

/// The request a function receives.
public struct FunctionRequest: Sendable {
    /// `GET`, `POST`, `PUT`, `PATCH`, `DELETE`.
    public let method: String
    /// What follows the function's name in the path (`/functions/v1/hello/a/b` → `/a/b`), `""` when nothing does.
    public let subpath: String
    /// The query string's pairs, in order, percent-decoded.
    public let query: [(name: String, value: String)]
    /// Header names lowercased.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public init(method: String, subpath: String, query: [(name: String, value: String)], headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.subpath = subpath
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name` (any case).
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name == lowered }?.value
    }

    /// The body as JSON; a 400 (`malformedBody`) when it is not JSON.
    public func json() throws(CaravanError) -> JSONValue {
        do {
            return try JSONParser.parse(bytes: body)
        } catch {
            throw CaravanError(.malformedBody, "The request body is not valid JSON")
        }
    }
}

/// A function's answer.
public struct FunctionResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON answer (`Content-Type: application/json`).
    public static func json(_ value: JSONValue, status: Int = 200) -> FunctionResponse {
        FunctionResponse(status: status, headers: [("content-type", "application/json")], body: Array(value.jsonText.utf8))
    }

    /// A text answer (`Content-Type: text/plain; charset=utf-8`).
    public static func text(_ text: String, status: Int = 200) -> FunctionResponse {
        FunctionResponse(status: status, headers: [("content-type", "text/plain; charset=utf-8")], body: Array(text.utf8))
    }
}

/// What a function runs with: the caller, and the pipeline and catalog for its own transactions.
public struct FunctionContext: Sendable {
    public let identity: Identity
    public let pipeline: WritePipeline
    public let catalog: Catalog

    public init(identity: Identity, pipeline: WritePipeline, catalog: Catalog) {
        self.identity = identity
        self.pipeline = pipeline
        self.catalog = catalog
    }

    /// Runs `body` in one transaction as the caller: their policies apply, the change log records what it writes.
    public func transaction<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> T {
        try await pipeline.run(catalog.access(for: identity), body)
    }

    /// The same context as the service role (for work the function does on the caller's behalf, as an edge function
    /// uses the service-role key: the function is then responsible for what the caller may see).
    public var asServiceRole: FunctionContext {
        FunctionContext(identity: .serviceRole, pipeline: pipeline, catalog: catalog)
    }
}

import CaravanAuth
import CaravanCore
import CaravanServer
import CaravanTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LanguageExchange
import NIOCore
import Testing

/// `/functions/v1/<name>` through the real router, as supabase-swift's `FunctionsClient.invoke` calls it
/// (`Sources/Functions/FunctionsClient.swift`: `POST {url}/functions/v1/{name}` with the `Authorization` and
/// `apikey` headers; a non-2xx answer becomes `FunctionsError.httpError(code:data:)` carrying the body).
@Suite struct FunctionsRouteTests {
    static let user = "aaaaaaaa-0000-4000-8000-00000000000a"

    /// Functions that show what a handler receives and how its errors reach the client.
    static let probes = AppModule(name: "probes", tables: [], migrations: [], edgeFunctions: [
        EdgeFunction("echo") { request, context in
            .json(.object([
                ("method", .string(request.method)), ("subpath", .string(request.subpath)),
                ("query", .object(request.query.map { (key: $0.name, value: JSONValue.string($0.value)) })),
                ("x-probe", request.header("X-Probe").map(JSONValue.string) ?? .null),
                ("body", .string(String(decoding: request.body, as: UTF8.self))), ("role", .string(context.identity.role.rawValue)),
                ("user", context.identity.userID.map(JSONValue.string) ?? .null),
            ]), status: 201)
        },
        EdgeFunction("refuse") { _, _ in throw CaravanError(.invalidValue, "amount must be positive") },
        EdgeFunction("crash") { _, _ in throw CocoaError(.fileNoSuchFile) },
        EdgeFunction("raw") { _, _ in FunctionResponse(status: 200, headers: [("content-type", "application/octet-stream"), ("x-answer", "42")], body: [0, 1, 2]) },
    ])

    struct Deployment {
        let app: Application<RouterResponder<CaravanRequestContext>>
        let keys: APIKeys
        let token: String
        let store: any Store

        func call(_ path: String, _ method: HTTPRequest.Method = .post, bearer: String? = nil, headers extra: HTTPFields = [:], body: String = "") async throws -> TestResponse {
            var headers: HTTPFields = [HTTPField.Name("apikey")!: keys.anonKey, .authorization: "Bearer \(bearer ?? keys.anonKey)", .contentType: "application/json"]
            headers.append(contentsOf: extra)
            let sent = headers
            return try await app.test(.router) { client in
                try await client.execute(uri: path, method: method, headers: sent, body: ByteBuffer(string: body))
            }
        }
    }

    static func deployment(_ engine: Engine) async throws -> Deployment {
        let catalog = Catalog(modules: [SystemModule.module, LanguageExchangeModule.make(translator: EchoTranslator()), probes])
        let store = try await engine.makeStore(migrations: catalog.migrations)
        let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
        let csv = "iso639_3,iso639_1,iso639_2b,iso_name,cldr_name_en,name_ar,native_name,scope,type\nara,ar,,Arabic,Arabic,العربية,العربية,M,L\neng,en,,English,English,الإنجليزية,English,I,L\n"
        _ = try await pipeline.run(catalog.access(for: .serviceRole)) { tx in try await LanguageImporter.load(csv: csv, in: tx) }
        let directory = NSTemporaryDirectory() + "caravan-functions-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let secret = try SigningSecret.loadOrCreate(in: directory, now: 1_700_000_000)
        let verifier = await TokenVerifier(secret: secret, now: { 1_800_000_000 })
        let token = try await verifier.issueToken(claims: .object([
            ("sub", .string(user)), ("role", .string("authenticated")), ("aud", .string("authenticated")), ("exp", .integer(4_000_000_000)),
        ]))
        let services = CaravanServices(store: store, catalog: catalog, verifier: verifier, publisher: ChangePublisher())
        return Deployment(app: Application(router: buildRouter(configuration: ServerConfiguration(), services: services)), keys: try await verifier.apiKeys(),
                          token: token, store: store)
    }

    @Test(arguments: Engine.allCases)
    func translateMessageIsServedAsTheDesignWritesIt(engine: Engine) async throws {
        let d = try await Self.deployment(engine)
        let body = #"{"text":"Hello","targetLanguage":"ar","sourceLanguage":"en"}"#
        let first = try await d.call("/functions/v1/translate-message", bearer: d.token, body: body)
        #expect(first.status == .ok)
        #expect(try JSONParser.parse(bytes: Array(first.body.readableBytesView)) == .object([("translation", .string("ar: Hello"))]))
        // Cache first: the second call is a hit on the one cached row, shared with the translate RPC.
        let second = try await d.call("/functions/v1/translate-message", bearer: d.token, body: body)
        #expect(String(buffer: second.body) == String(buffer: first.body))
        let rpc = try await d.call("/rest/v1/rpc/translate", bearer: d.token, body: #"{"text":"Hello","source_language":"eng","target_language":"ara"}"#)
        #expect(String(buffer: rpc.body) == #""ar: Hello""#)
        let cached = try await d.store.fetch(try ReadPlan(table: LanguageExchangeSchema.translationCache, query: Query(), access: .constant(true),
                                                          maxRows: nil, includeCount: false))
        #expect(cached.rows.count == 1)
        let usage = try #require(cached.outputs.firstIndex { $0.name == "usage_count" })
        #expect(cached.rows[0][usage] == .integer(3))

        // The anon key is refused (a signed-in function), and so is a body without its fields — as JSON.
        let anonymous = try await d.call("/functions/v1/translate-message", body: body)
        #expect(anonymous.status == .unauthorized)
        #expect(try JSONParser.parse(bytes: Array(anonymous.body.readableBytesView))["message"] != nil)
        let missing = try await d.call("/functions/v1/translate-message", bearer: d.token, body: #"{"text":"Hello"}"#)
        #expect(missing.status == .badRequest)
        #expect(String(buffer: missing.body).contains("sourceLanguage must be a string"))
        let notJSON = try await d.call("/functions/v1/translate-message", bearer: d.token, body: "text=Hello")
        #expect(notJSON.status == .badRequest && String(buffer: notJSON.body).contains("PGRST102"))
        let failing = try await d.call("/functions/v1/translate-message", bearer: d.token, body: #"{"text":"fail","targetLanguage":"ar","sourceLanguage":"en"}"#)
        #expect(failing.status == .badGateway)
    }

    @Test func aHandlerSeesTheMethodSubpathQueryHeadersBodyAndCaller() async throws {
        let d = try await Self.deployment(.sqlite)
        let answer = try await d.call("/functions/v1/echo/a/b?x=1&y=two%20words", .put, bearer: d.token,
                                      headers: [HTTPField.Name("x-probe")!: "yes"], body: "payload")
        #expect(answer.status == .created)
        let json = try JSONParser.parse(bytes: Array(answer.body.readableBytesView))
        #expect(json["method"] == .string("PUT") && json["subpath"] == .string("/a/b") && json["x-probe"] == .string("yes"))
        #expect(json["query"] == .object([("x", .string("1")), ("y", .string("two words"))]))
        #expect(json["body"] == .string("payload") && json["role"] == .string("authenticated") && json["user"] == .string(Self.user))
        let bare = try JSONParser.parse(bytes: Array(try await d.call("/functions/v1/echo", .get).body.readableBytesView))
        #expect(bare["subpath"] == .string("") && bare["role"] == .string("anon") && bare["user"] == .null)
    }

    @Test func errorsAreJSONAndUnknownNamesAreTheRuntimesNotFound() async throws {
        let d = try await Self.deployment(.sqlite)
        let refused = try await d.call("/functions/v1/refuse")
        #expect(refused.status == .badRequest)
        #expect(try JSONParser.parse(bytes: Array(refused.body.readableBytesView))["message"] == .string("amount must be positive"))
        let crashed = try await d.call("/functions/v1/crash")
        #expect(crashed.status == .internalServerError)
        let crash = try JSONParser.parse(bytes: Array(crashed.body.readableBytesView))
        #expect(crash["code"] == .string("WORKER_ERROR"))
        #expect(!String(buffer: crashed.body).contains("NSCocoaErrorDomain") && !String(buffer: crashed.body).contains("fileNoSuchFile"))
        let unknown = try await d.call("/functions/v1/no-such-function/x")
        #expect(unknown.status == .notFound)
        #expect(try JSONParser.parse(bytes: Array(unknown.body.readableBytesView))["code"] == .string("NOT_FOUND"))
        let raw = try await d.call("/functions/v1/raw")
        #expect(Array(raw.body.readableBytesView) == [0, 1, 2] && raw.headers[HTTPField.Name("x-answer")!] == "42")
        #expect(raw.headers[.contentType] == "application/octet-stream")
    }
}

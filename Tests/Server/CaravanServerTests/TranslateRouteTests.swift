import CaravanAuth
import CaravanCore
import CaravanTesting
import CaravanServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LanguageExchange
import NIOCore
import Testing

/// A translator that answers `<target>: <text>`, and fails for the text `fail`.
struct EchoTranslator: Translator {
    var provider: String { "echo" }

    func translate(_ text: String, from source: String, to target: String) async throws -> String {
        if text == "fail" { throw CaravanError(.upstreamFailure, "the translation provider failed", details: "status 500") }
        return "\(target): \(text)"
    }
}

/// `/rest/v1/rpc/translate`, an asynchronous function of LanguageExchange, through the real router.
@Suite struct TranslateRouteTests {
    static let user = "aaaaaaaa-0000-4000-8000-00000000000a"

    @Test(arguments: Engine.allCases)
    func translateOverREST(engine: Engine) async throws {
        let catalog = Catalog(modules: [SystemModule.module, LanguageExchangeModule.make(translator: EchoTranslator())])
        let store = try await engine.makeStore(migrations: catalog.migrations)
        let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
        let csv = "iso639_3,iso639_1,iso639_2b,iso_name,cldr_name_en,name_ar,native_name,scope,type\nara,ar,,Arabic,Arabic,العربية,العربية,M,L\neng,en,,English,English,الإنجليزية,English,I,L\n"
        _ = try await pipeline.run(catalog.access(for: .serviceRole)) { tx in try await LanguageImporter.load(csv: csv, in: tx) }
        let directory = NSTemporaryDirectory() + "caravan-translate-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let secret = try SigningSecret.loadOrCreate(in: directory, now: 1_700_000_000)
        let verifier = await TokenVerifier(secret: secret, now: { 1_800_000_000 })
        let keys = try await verifier.apiKeys()
        let token = try await verifier.issueToken(claims: .object([
            ("sub", .string(Self.user)), ("role", .string("authenticated")), ("aud", .string("authenticated")), ("exp", .integer(4_000_000_000)),
        ]))
        let services = CaravanServices(store: store, catalog: catalog, verifier: verifier, publisher: ChangePublisher())
        let app = Application(router: buildRouter(configuration: ServerConfiguration(), services: services))
        func call(_ bearer: String, _ method: HTTPRequest.Method = .post, _ body: String) async throws -> TestResponse {
            let headers: HTTPFields = [HTTPField.Name("apikey")!: keys.anonKey, .authorization: "Bearer \(bearer)", .contentType: "application/json"]
            return try await app.test(.router) { client in
                try await client.execute(uri: "/rest/v1/rpc/translate", method: method, headers: headers, body: ByteBuffer(string: body))
            }
        }
        let hello = try await call(token, .post, #"{"text":"Hello","source_language":"eng","target_language":"ara"}"#)
        #expect(hello.status == .ok)
        #expect(String(buffer: hello.body) == #""ar: Hello""#)
        let failed = try await call(token, .post, #"{"text":"fail","source_language":"en","target_language":"ar"}"#)
        #expect(failed.status == .badGateway)
        #expect(String(buffer: failed.body).contains("CARAVAN_UPSTREAM_FAILURE"))
        let anonymous = try await call(keys.anonKey, .post, #"{"text":"Hello","source_language":"en","target_language":"ar"}"#)
        #expect(anonymous.status == .unauthorized)
        let viaGet = try await call(token, .get, "")
        #expect(viaGet.status == .methodNotAllowed)
        let cached = try await store.fetch(try ReadPlan(table: LanguageExchangeSchema.translationCache, query: Query(), access: .constant(true), maxRows: nil, includeCount: false))
        #expect(cached.rows.count == 1)
    }
}

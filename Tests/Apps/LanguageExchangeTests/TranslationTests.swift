import CaravanCore
import CaravanTesting
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
@testable import LanguageExchange
import Synchronization
import Testing

/// A local OpenAI-compatible chat-completions server: it answers `<target>: <text>` after `delay`, 500 for the text
/// `fail`, a body without choices for `empty`, and records what it was sent.
final class FakeProvider: Sendable {
    struct Call: Sendable {
        let authorization: String?
        let body: String
    }

    let calls = Mutex<[Call]>([])
    let delay: Duration

    init(delay: Duration = .zero) { self.delay = delay }

    var count: Int { calls.withLock { $0.count } }

    func application() -> some ApplicationProtocol {
        let router = Router()
        router.post("v1/chat/completions") { request, _ -> Response in
            let body = String(buffer: try await request.body.collect(upTo: 1_000_000))
            self.calls.withLock { $0.append(Call(authorization: request.headers[.authorization], body: body)) }
            try await Task.sleep(for: self.delay)
            guard case .object(let root) = try JSONParser.parse(body), case .array(let messages)? = root.first(where: { $0.key == "messages" })?.value,
                  case .object(let system)? = messages.first, case .object(let user)? = messages.last,
                  case .string(let prompt)? = system.first(where: { $0.key == "content" })?.value,
                  case .string(let text)? = user.first(where: { $0.key == "content" })?.value else {
                return Response(status: .badRequest)
            }
            if text == "fail" { return Response(status: .internalServerError) }
            let target = prompt.components(separatedBy: " to ").last?.components(separatedBy: ".").first ?? "?"
            let answer = text == "empty" ? #"{"choices":[]}"#
                : JSONValue.object([("choices", .array([.object([("message", .object([("role", .string("assistant")), ("content", .string("\(target): \(text)"))]))])]))]).jsonText
            return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: answer)))
        }
        return Application(router: router)
    }
}

@Suite("LanguageExchange translation cache (item 6)")
struct TranslationTests {
    /// Runs `body` with a fixture, the fake provider on a local port and the service on it.
    static func withService(_ engine: Engine, delay: Duration = .zero, _ body: @escaping @Sendable (F, FakeProvider, TranslationService) async throws -> Void) async throws {
        let f = try await F(engine: engine)
        let provider = FakeProvider(delay: delay)
        try await provider.application().test(.live) { client in
            let port = try #require(client.port)
            let translator = OpenAICompatibleTranslator(configuration: .init(baseURL: try #require(URL(string: "http://localhost:\(port)/v1")), apiKey: "test-key", model: "test-model"))
            try await body(f, provider, TranslationService(pipeline: f.pipeline, catalog: f.catalog, translator: translator))
        }
    }

    static let user = Identity(role: .authenticated, userID: F.uuid(1))

    static func sha256(_ text: String) -> String {
        SHA256.hash(data: Array(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    @Test("a miss asks the provider with the design's prompt and stores one row; a hit counts a use", arguments: Engine.allCases)
    func missThenHit(engine: Engine) async throws {
        try await Self.withService(engine) { f, provider, service in
            #expect(try await service.translate("Hello", source: "eng", target: "ar", as: Self.user) == "ar: Hello")
            #expect(try await service.translate("Hello", source: "en", target: "ara", as: Self.user) == "ar: Hello")
            #expect(provider.count == 1)
            let call = try #require(provider.calls.withLock { $0.first })
            #expect(call.authorization == "Bearer test-key")
            #expect(call.body.contains(#""model":"test-model""#))
            #expect(call.body.contains("Translate the following text from en to ar. Provide only the translation, no explanations."))
            let rows = try await f.rows(S.translationCache)
            #expect(rows.count == 1)
            #expect(rows.first?["text_hash"]?.text == Self.sha256("Hello"))
            #expect(rows.first?["usage_count"] == .integer(2) && rows.first?["provider"]?.text == "openai")
        }
    }

    @Test("tashkeel is not folded: vocalized and plain Arabic are two entries", arguments: Engine.allCases)
    func tashkeelKeepsItsOwnKey(engine: Engine) async throws {
        try await Self.withService(engine) { f, provider, service in
            _ = try await service.translate("مَرْحَبًا", source: "ar", target: "en", as: Self.user)
            _ = try await service.translate("مرحبا", source: "ar", target: "en", as: Self.user)
            #expect(provider.count == 2)
            #expect(Set(try await f.rows(S.translationCache).compactMap { $0["text_hash"]?.text }) == [Self.sha256("مَرْحَبًا"), Self.sha256("مرحبا")])
        }
    }

    @Test("concurrent misses store one row and every use is counted", arguments: Engine.allCases)
    func concurrentMisses(engine: Engine) async throws {
        try await Self.withService(engine, delay: .milliseconds(300)) { f, provider, service in
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<4 { group.addTask { try await service.translate("Good morning", source: "en", target: "es", as: Self.user) } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(answers == Array(repeating: "es: Good morning", count: 4))
            let rows = try await f.rows(S.translationCache)
            #expect(rows.count == 1)
            #expect(rows.first?["usage_count"] == .integer(4))
            let asked = provider.count
            #expect(asked >= 1)
            // Concurrent hits: every use counted (no lost update), the provider not asked again.
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<6 { group.addTask { try await service.translate("Good morning", source: "en", target: "es", as: Self.user) } }
                for try await answer in group { #expect(answer == "es: Good morning") }
            }
            #expect(try await f.rows(S.translationCache).first?["usage_count"] == .integer(10))
            #expect(provider.count == asked)
        }
    }

    @Test("provider errors are upstreamFailure (502) with nothing cached; same language returns the text; callers and codes checked", arguments: Engine.allCases)
    func failures(engine: Engine) async throws {
        try await Self.withService(engine) { f, provider, service in
            await expectFailure(.upstreamFailure, naming: "status 500") { _ = try await service.translate("fail", source: "en", target: "ar", as: Self.user) }
            await expectFailure(.upstreamFailure, naming: "without a translation") { _ = try await service.translate("empty", source: "en", target: "ar", as: Self.user) }
            let cached = try await f.rows(S.translationCache)
            #expect(cached.isEmpty)
            let same = try await service.translate("أهلاً", source: "ara", target: "ar", as: Self.user)
            #expect(same == "أهلاً")
            #expect(provider.count == 2)
            await expectFailure(.permissionDenied, naming: "translate") { _ = try await service.translate("Hi", source: "en", target: "ar", as: Identity(role: .anon)) }
            await expectFailure(.invalidParameterValue, naming: "source_language") { _ = try await service.translate("Hi", source: "xx", target: "ar", as: Self.user) }
            await expectFailure(.invalidParameterValue, naming: "text") { _ = try await service.translate("", source: "en", target: "ar", as: Self.user) }
        }
    }
}

import AsyncHTTPClient
package import CaravanCore
package import Foundation
import NIOCore
import NIOHTTP1

/// A `Translator` on an OpenAI-compatible chat-completions endpoint (OpenAI, OpenRouter, a local server), with the
/// design's prompt.
package struct OpenAICompatibleTranslator: Translator {
    package struct Configuration: Sendable {
        /// The API root, such as `https://openrouter.ai/api/v1`; requests go to `<baseURL>/chat/completions`.
        package var baseURL: URL
        /// Sent as a bearer token; never logged or put in an error.
        package var apiKey: String
        package var model: String
        package var provider: String
        package var timeout: TimeInterval

        package init(baseURL: URL, apiKey: String, model: String = "openai/gpt-3.5-turbo", provider: String = "openai", timeout: TimeInterval = 30) {
            self.baseURL = baseURL
            self.apiKey = apiKey
            self.model = model
            self.provider = provider
            self.timeout = timeout
        }
    }

    package let configuration: Configuration

    /// The provider of `environment` (read once, by the executable): `CARAVAN_TRANSLATION_BASE_URL` and
    /// `CARAVAN_TRANSLATION_API_KEY` (both required), `CARAVAN_TRANSLATION_MODEL`, `CARAVAN_TRANSLATION_PROVIDER`; nil when
    /// the first two are not both set.
    package static func configuration(environment: [String: String]) -> Configuration? {
        guard let base = environment["CARAVAN_TRANSLATION_BASE_URL"].flatMap(URL.init(string:)),
              let key = environment["CARAVAN_TRANSLATION_API_KEY"], !key.isEmpty else { return nil }
        var configuration = Configuration(baseURL: base, apiKey: key)
        if let model = environment["CARAVAN_TRANSLATION_MODEL"], !model.isEmpty { configuration.model = model }
        if let provider = environment["CARAVAN_TRANSLATION_PROVIDER"], !provider.isEmpty { configuration.provider = provider }
        return configuration
    }

    package var provider: String { configuration.provider }

    package init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The design's system prompt.
    static func prompt(from source: String, to target: String) -> String {
        "Translate the following text from \(source) to \(target). Provide only the translation, no explanations."
    }

    /// The request body: the model, the system prompt and the text as the user's message.
    func body(_ text: String, from source: String, to target: String) -> Data {
        let message: (String, String) -> JSONValue = { role, content in .object([("role", .string(role)), ("content", .string(content))]) }
        let body = JSONValue.object([
            ("model", .string(configuration.model)),
            ("messages", .array([message("system", Self.prompt(from: source, to: target)), message("user", text)])),
        ])
        return Data(body.jsonText.utf8)
    }

    package func translate(_ text: String, from source: String, to target: String) async throws -> String {
        var request = HTTPClientRequest(url: configuration.baseURL.appendingPathComponent("chat/completions").absoluteString)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.apiKey)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body(text, from: source, to: target)))
        let data: Data
        let status: UInt
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .milliseconds(Int64(configuration.timeout * 1000)))
            status = response.status.code
            data = Data(try await response.body.collect(upTo: Self.largestAnswer).readableBytesView)
        } catch {
            throw CaravanError(.upstreamFailure, "the translation provider could not be reached", internalDetail: "\(error)")
        }
        guard (200..<300).contains(status) else {
            throw CaravanError(.upstreamFailure, "the translation provider failed", details: "status \(status)")
        }
        return try Self.translation(in: data)
    }

    /// The largest answer read from the provider (a translation of one message is a few KiB).
    static let largestAnswer = 4 << 20

    /// `choices[0].message.content` of a chat-completions response, trimmed; `upstreamFailure` when absent or empty.
    static func translation(in data: Data) throws -> String {
        let parsed = try? JSONParser.parse(String(decoding: data, as: UTF8.self))
        guard case .object(let root)? = parsed, case .array(let choices)? = root.first(where: { $0.key == "choices" })?.value,
              case .object(let choice)? = choices.first, case .object(let message)? = choice.first(where: { $0.key == "message" })?.value,
              case .string(let content)? = message.first(where: { $0.key == "content" })?.value else {
            throw CaravanError(.upstreamFailure, "the translation provider answered without a translation")
        }
        let translation = content.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !translation.isEmpty else { throw CaravanError(.upstreamFailure, "the translation provider answered an empty translation") }
        return translation
    }
}

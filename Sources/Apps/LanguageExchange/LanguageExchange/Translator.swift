/// A machine translation provider (the design's OpenRouter/OpenAI call).
package protocol Translator: Sendable {
    /// The provider's name, part of the cache key (`openai`, `google`, `deepl`).
    var provider: String { get }

    /// `text` from `source` to `target` (canonical language codes). Throws `upstreamFailure` when the provider fails.
    func translate(_ text: String, from source: String, to target: String) async throws -> String
}

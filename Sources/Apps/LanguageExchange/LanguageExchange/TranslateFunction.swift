import CaravanCore

/// `translate(text, source_language, target_language) → text` for signed-in callers: the `TranslationService` on
/// the caller's request, outside any transaction (the provider call may take seconds).
enum TranslateFunction {
    static func make(translator: any Translator) -> AsyncRPCFunction {
        AsyncRPCFunction("translate", parameters: [
            RPCParameter("text", .text), RPCParameter("source_language", .text), RPCParameter("target_language", .text),
        ]) { arguments, context in
            let service = TranslationService(pipeline: context.pipeline, catalog: context.catalog, translator: translator)
            let translation = try await service.translate(arguments.text("text") ?? "", source: arguments.text("source_language") ?? "",
                                                          target: arguments.text("target_language") ?? "", as: context.identity)
            return .scalar(.text(translation))
        }
    }
}

/// The translator of a deployment without a provider: every miss is `upstreamFailure` (nothing is cached).
struct UnconfiguredTranslator: Translator {
    var provider: String { "openai" }

    func translate(_ text: String, from source: String, to target: String) async throws -> String {
        throw CaravanError(.upstreamFailure, "no translation provider is configured",
                           hint: "set CARAVAN_TRANSLATION_BASE_URL and CARAVAN_TRANSLATION_API_KEY")
    }
}

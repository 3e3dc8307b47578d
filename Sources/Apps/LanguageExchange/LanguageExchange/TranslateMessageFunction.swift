import CaravanCore

/// The design's edge function, served as it is written (seed §"Supabase Edge Functions"):
/// `POST /functions/v1/translate-message` with `{text, targetLanguage, sourceLanguage}` answers `{translation}`,
/// cache first — the same `TranslationService` (cache, provider, limits) as the `translate` RPC, for signed-in
/// callers.
enum TranslateMessageFunction {
    static func make(translator: any Translator) -> EdgeFunction {
        EdgeFunction("translate-message", requiresUser: true) { request, context in
            let body = try request.json()
            func field(_ name: String) throws(CaravanError) -> String {
                guard case .string(let value)? = body[name] else {
                    throw CaravanError(.invalidValue, "\(name) must be a string", hint: "Send {\"text\", \"sourceLanguage\", \"targetLanguage\"}")
                }
                return value
            }
            let service = TranslationService(pipeline: context.pipeline, catalog: context.catalog, translator: translator)
            let translation = try await service.translate(try field("text"), source: try field("sourceLanguage"), target: try field("targetLanguage"),
                                                          as: context.identity)
            return .json(.object([("translation", .string(translation))]))
        }
    }
}

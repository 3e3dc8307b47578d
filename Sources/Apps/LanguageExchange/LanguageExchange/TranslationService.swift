package import CaravanCore

/// `translate(text, source_language, target_language)` for signed-in callers, fronted by the translation cache:
/// a hit is answered from the cache (its `usage_count` + 1); a miss asks the `Translator` outside any transaction,
/// then stores one row (concurrent misses store one row); a provider error is `upstreamFailure` (502) with nothing
/// cached; source = target returns the text as is.
package struct TranslationService: Sendable {
    let pipeline: WritePipeline
    let catalog: Catalog
    let translator: any Translator

    package init(pipeline: WritePipeline, catalog: Catalog, translator: any Translator) {
        self.pipeline = pipeline
        self.catalog = catalog
        self.translator = translator
    }

    package func translate(_ text: String, source: String, target: String, as identity: Identity) async throws -> String {
        guard identity.role == .authenticated, identity.userID != nil else {
            throw CaravanError(.permissionDenied, "permission denied for function translate", hint: "sign in first")
        }
        guard !text.isEmpty, text.unicodeScalars.count <= LanguageExchangeSchema.maxMessageScalars else {
            throw CaravanError.invalidArgument("text", nil, "must be 1 to \(LanguageExchangeSchema.maxMessageScalars) characters")
        }
        let service = catalog.access(for: .serviceRole)
        let (from, to) = try await pipeline.run(service) { tx in
            let codes = try await LanguageCodes(resolving: [source, target], in: tx)
            guard let from = codes.canonical[source.lowercased()] else { throw CaravanError.invalidArgument("source_language", source, "unknown language code") }
            guard let to = codes.canonical[target.lowercased()] else { throw CaravanError.invalidArgument("target_language", target, "unknown language code") }
            return (from, to)
        }
        if from == to { return text }
        let key = TranslationCache.Key(text: text, from: from, to: to, provider: translator.provider)
        if let cached = try await pipeline.run(service, { tx in try await TranslationCache.hit(key, in: tx) }) { return cached }
        let translation: String
        do {
            translation = try await translator.translate(text, from: from, to: to)
        } catch let error as CaravanError {
            throw error
        } catch {
            throw CaravanError(.upstreamFailure, "the translation provider failed", internalDetail: "\(error)")
        }
        return try await pipeline.run(service) { tx in try await TranslationCache.store(translation, for: key, in: tx) }
    }
}

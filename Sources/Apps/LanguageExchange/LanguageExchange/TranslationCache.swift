import CaravanCore
import Crypto

/// The `translation_cache` rows on the storage port: keyed by the lowercase hex SHA-256 of the exact UTF-8 text (no
/// folding: tashkeel changes meaning), the two languages and the provider. A hit counts one more use.
enum TranslationCache {
    struct Key: Sendable {
        let hash: String
        let from: String
        let to: String
        let provider: String

        init(text: String, from: String, to: String, provider: String) {
            hash = SHA256.hash(data: Array(text.utf8)).map { byte in
                let hex = String(byte, radix: 16)
                return byte < 16 ? "0" + hex : hex
            }.joined()
            self.from = from
            self.to = to
            self.provider = provider
        }

        /// What transactions on this cache entry serialize on.
        var lockName: String { "language-exchange.translation:\(provider):\(from):\(to):\(hash)" }

        var columns: KeyValuePairs<String, Value> {
            ["text_hash": .text(hash), "from_language": .text(from), "to_language": .text(to), "provider": .text(provider)]
        }
    }

    /// The cached translation of `key`, its use counted; nil on a miss. Transactions on one key run one after the
    /// other (`serialize`), so the count read here is the latest and `n + 1` loses no concurrent use.
    static func hit(_ key: Key, in tx: any StoreTransaction) async throws -> String? {
        let cache = LanguageExchangeSchema.translationCache
        let filter = try cache.matching(key.columns)
        try await tx.serialize(on: key.lockName)
        guard let row = try await tx.rows(cache, ["translated_text", "usage_count"], where: filter).first, let text = row[0].textValue,
              let count = row[1].integerValue else { return nil }
        _ = try await tx.update(cache, set: RowValues(["usage_count": .integer(count + 1)]), where: filter)
        return text
    }

    /// Stores `translation` for `key`, unless a concurrent miss stored one first: then that one is used (and counted).
    static func store(_ translation: String, for key: Key, in tx: any StoreTransaction) async throws -> String {
        try await tx.serialize(on: key.lockName)
        var row = RowValues(key.columns)
        row.set("translated_text", .text(translation))
        let conflict = ConflictTarget(columns: ["text_hash", "from_language", "to_language", "provider"], resolution: .ignore)
        if try await tx.insert([row], into: LanguageExchangeSchema.translationCache, conflict: conflict).inserted == 1 { return translation }
        return try await hit(key, in: tx) ?? translation
    }
}

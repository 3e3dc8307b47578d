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

        var columns: KeyValuePairs<String, Value> {
            ["text_hash": .text(hash), "from_language": .text(from), "to_language": .text(to), "provider": .text(provider)]
        }
    }

    /// The cached translation of `key`, its use counted; nil on a miss.
    ///
    /// The count is compare-and-set (`usage_count = n + 1 where usage_count = n`): a read before the transaction's
    /// first write may be stale on PostgreSQL, but the update runs after the write-order lock, so a concurrent hit
    /// makes it match nothing and the second attempt — now holding the lock — reads and counts exactly.
    static func hit(_ key: Key, in tx: any StoreTransaction) throws -> String? {
        let cache = LanguageExchangeSchema.translationCache
        let filter = try cache.matching(key.columns)
        let usage = try cache.requireColumn("usage_count")
        for _ in 0..<2 {
            guard let row = try tx.rows(cache, ["translated_text", "usage_count"], where: filter).first, let text = row[0].textValue,
                  let count = row[1].integerValue else { return nil }
            let counted = try tx.update(cache, set: RowValues(["usage_count": .integer(count + 1)]), where: .and([filter, .compare(usage, .eq, .integer(count))]))
            if counted.updated == 1 { return text }
        }
        throw CaravanError(.internalFailure, "translation_cache usage_count kept changing under a held write lock")
    }

    /// Stores `translation` for `key`, unless a concurrent miss stored one first: then that one is used (and counted).
    /// The insert comes first (ignored on a conflict) so that what follows reads after the write-order lock.
    static func store(_ translation: String, for key: Key, in tx: any StoreTransaction) throws -> String {
        var row = RowValues(key.columns)
        row.set("translated_text", .text(translation))
        let conflict = ConflictTarget(columns: ["text_hash", "from_language", "to_language", "provider"], resolution: .ignore)
        if try tx.insert([row], into: LanguageExchangeSchema.translationCache, conflict: conflict).inserted == 1 { return translation }
        return try hit(key, in: tx) ?? translation
    }
}

package import CaravanCore
import Crypto

/// Tatoeba sentence pairs (`tatoeba_ara_eng.tsv`: `English<TAB>Arabic<TAB>attribution`) as demo data
/// (`caravan import tatoeba FILE`): a conversation between two demo profiles, Sam (native English, learning Arabic)
/// and Amal (native Arabic, learning English), whose messages are the pairs — alternately Sam's English with its
/// Arabic in `translated_text`, and Amal's Arabic with its English — and a warm translation cache in both
/// directions (en→ar keyed by the English text, ar→en by the Arabic; a repeated source keeps its first
/// translation). Message ids derive from the line, so a re-import adds nothing.
package enum TatoebaImporter {
    package static let sam = "5a3d0000-0000-4000-8000-00000000e4e1"
    package static let amal = "a3a10000-0000-4000-8000-00000000a4a1"

    package struct Pair: Sendable, Hashable {
        package let line: Int
        package let english: String
        package let arabic: String
    }

    package struct Rejection: Sendable, Hashable {
        package let line: Int
        package let reason: String
    }

    package struct Summary: Sendable {
        package var pairs = 0
        package var rejections: [Rejection] = []
        package var messagesInserted = 0
        package var cacheInsertedEnglishToArabic = 0
        package var cacheInsertedArabicToEnglish = 0
        package var conversationID = ""
    }

    /// The pairs of `tsv` and the lines rejected (not three fields, an empty side, over 1,000 scalars).
    package static func pairs(fromTSV tsv: String) -> (pairs: [Pair], rejections: [Rejection]) {
        var pairs: [Pair] = []
        var rejections: [Rejection] = []
        for (offset, raw) in tsv.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.isEmpty { continue }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map { String($0).trimmingWhitespace }
            guard fields.count >= 2 else { rejections.append(Rejection(line: offset + 1, reason: "expected English<TAB>Arabic")); continue }
            guard !fields[0].isEmpty, !fields[1].isEmpty else { rejections.append(Rejection(line: offset + 1, reason: "an empty sentence")); continue }
            guard fields[0].unicodeScalars.count <= LanguageExchangeSchema.maxMessageScalars,
                  fields[1].unicodeScalars.count <= LanguageExchangeSchema.maxMessageScalars else {
                rejections.append(Rejection(line: offset + 1, reason: "a sentence over \(LanguageExchangeSchema.maxMessageScalars) characters")); continue
            }
            pairs.append(Pair(line: offset + 1, english: fields[0], arabic: fields[1]))
        }
        return (pairs, rejections)
    }

    /// The id of the message of `line`.
    static func messageID(line: Int) -> String {
        let digest = Array(SHA256.hash(data: Array("tatoeba:\(line)".utf8)))
        func word(_ start: Int) -> UInt64 { digest[start..<start + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        return DeterministicID.format(high: word(0), low: word(8))
    }

    /// Writes the demo profiles, their match and conversation, the messages (the n-th pair sent n minutes after the
    /// first, the last at `now`) and the cache rows of `provider`, in `tx` (the service role's).
    package static func load(_ pairs: [Pair], provider: String, now: Int64, in tx: any StoreTransaction) async throws -> Summary {
        var summary = Summary(pairs: pairs.count)
        let ignore = { (columns: [String]) in ConflictTarget(columns: columns, resolution: .ignore) }
        _ = try await tx.insert([RowValues(["id": .text(sam)]), RowValues(["id": .text(amal)])], into: SystemModule.users, conflict: ignore(["id"]))
        _ = try await tx.insert([
            RowValues(["id": .text(sam), "first_name": .text("Sam"), "native_language": .text("en"), "learning_languages": ColumnType.textArray(["ar"]),
                       "bio": .text("Tatoeba demo: English speaker learning Arabic.")]),
            RowValues(["id": .text(amal), "first_name": .text("Amal"), "native_language": .text("ar"), "learning_languages": ColumnType.textArray(["en"]),
                       "bio": .text("Tatoeba demo: Arabic speaker learning English.")]),
        ], into: LanguageExchangeSchema.profiles, conflict: ignore(["id"]))
        let (user1, user2) = sam < amal ? (sam, amal) : (amal, sam)
        let matches = LanguageExchangeSchema.matches
        _ = try await tx.insert([RowValues(["user1_id": .text(user1), "user2_id": .text(user2), "user1_liked": .bool(true), "user2_liked": .bool(true)])],
                          into: matches, conflict: ignore(["user1_id", "user2_id"]))
        guard let match = try await tx.row(matches, where: try matches.matching(["user1_id": .text(user1), "user2_id": .text(user2)])) else {
            throw CaravanError(.internalFailure, "import tatoeba wrote no match")
        }
        let conversation = try await SwipeFunctions.ensureConversation(of: match, in: tx)
        summary.conversationID = conversation.textValue ?? ""
        let minute: Int64 = 60_000_000
        var start = 0
        while start < pairs.count {
            let batch = pairs[start..<min(pairs.count, start + 500)]
            var messages: [RowValues] = []
            var toArabic: [RowValues] = []
            var toEnglish: [RowValues] = []
            for (index, pair) in zip(batch.indices, batch) {
                let fromSam = index % 2 == 0
                let (text, language, translation, target) = fromSam ? (pair.english, "en", pair.arabic, "ar") : (pair.arabic, "ar", pair.english, "en")
                var message = RowValues([
                    "id": .text(messageID(line: pair.line)), "conversation_id": conversation,
                    "sender_id": .text(fromSam ? sam : amal), "receiver_id": .text(fromSam ? amal : sam),
                    "original_text": .text(text), "original_language": .text(language),
                    "translated_text": .json(JSONValue.object([(key: target, value: .string(translation))]).jsonText),
                    "is_delivered": .bool(true), "is_read": .bool(true),
                ])
                message.set("created_at", .text(Timestamp.format(microseconds: now - Int64(pairs.count - 1 - index) * minute)))
                messages.append(message)
                for (source, from, translated, to, list) in [(pair.english, "en", pair.arabic, "ar", 0), (pair.arabic, "ar", pair.english, "en", 1)] {
                    var row = RowValues(TranslationCache.Key(text: source, from: from, to: to, provider: provider).columns)
                    row.set("translated_text", .text(translated))
                    if list == 0 { toArabic.append(row) } else { toEnglish.append(row) }
                }
            }
            summary.messagesInserted += try await tx.insert(messages, into: LanguageExchangeSchema.messages, conflict: ignore(["id"])).inserted
            let cacheKey = ignore(["text_hash", "from_language", "to_language", "provider"])
            summary.cacheInsertedEnglishToArabic += try await tx.insert(toArabic, into: LanguageExchangeSchema.translationCache, conflict: cacheKey).inserted
            summary.cacheInsertedArabicToEnglish += try await tx.insert(toEnglish, into: LanguageExchangeSchema.translationCache, conflict: cacheKey).inserted
            start += batch.count
        }
        return summary
    }
}

extension String {
    var trimmingWhitespace: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}

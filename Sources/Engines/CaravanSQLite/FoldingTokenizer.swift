package import CaravanCore
import Foundation
package import GRDB
import GRDBSQLite

/// The FTS5 tokenizer `caravan_fold`: `TextFolding` tokens, so an index and the queries on it fold alike (Arabic
/// letter forms, tashkeel, digits, Latin case and diacritics).
///
/// With the argument `stem` (`tokenize='caravan_fold stem'`), English words are also stemmed by SQLite's porter
/// stemmer, in a way that keeps type-ahead working:
/// - in documents, each token is emitted as folded and, when its stem differs, the stem too, at the same position
///   (an FTS5 colocated token);
/// - in queries, a whole token is replaced by its stem (`cafes` finds `cafe`, `hospitals` finds `hospital`), but a
///   prefix token (`"universit"*`) is kept as typed, so it matches the folded words it begins (the stem of
///   `university` is `univers`, which `universit` does not begin).
/// Only tokens of ASCII letters are stemmed; Arabic tokens pass unchanged.
///
/// It must be registered on every connection that reads or writes a table that uses it: `SQLiteStore` does so for
/// each connection of its pool, the transit bundle reader and builder for theirs.
package final class FoldingTokenizer: FTS5CustomTokenizer {
    package static let name = "caravan_fold"

    private let stemmer: (any FTS5Tokenizer)?

    package init(db: Database, arguments: [String]) throws {
        stemmer = arguments.contains("stem") ? try db.makeTokenizer(.porter(wrapping: .ascii())) : nil
    }

    package func tokenize(
        context: UnsafeMutableRawPointer?,
        tokenization: FTS5Tokenization,
        pText: UnsafePointer<CChar>?,
        nText: CInt,
        tokenCallback: @escaping FTS5TokenCallback
    ) -> CInt {
        guard let pText, nText > 0 else { return SQLITE_OK }
        let text = pText.withMemoryRebound(to: UInt8.self, capacity: Int(nText)) { bytes in
            String(decoding: UnsafeBufferPointer(start: bytes, count: Int(nText)), as: UTF8.self)
        }
        let isQuery = tokenization.contains(.query)
        let isPrefix = tokenization.contains(.prefix)
        for token in TextFolding.tokenize(text) {
            // Offsets come from the decoded text; they equal the input's unless it held invalid UTF-8.
            let start = CInt(clamping: min(token.utf8Range.lowerBound, Int(nText)))
            let end = CInt(clamping: min(token.utf8Range.upperBound, Int(nText)))
            let stem = stemmer.flatMap { Self.stem(token.text, with: $0) }
            var emitted: [(String, CInt)] = []
            switch (stem, isQuery) {
            case (nil, _): emitted = [(token.text, 0)]
            case (let stem?, true): emitted = [(isPrefix ? token.text : stem, 0)]
            case (let stem?, false): emitted = [(token.text, 0), (stem, FTS5TokenFlags.colocated.rawValue)]
            }
            for (text, flags) in emitted {
                var bytes = Array(text.utf8)
                let code = bytes.withUnsafeMutableBufferPointer { buffer in
                    buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { pointer in
                        tokenCallback(context, flags, pointer, CInt(buffer.count), start, end)
                    }
                }
                if code != SQLITE_OK { return code }
            }
        }
        return SQLITE_OK
    }

    /// The porter stem of an ASCII-letter token, when it differs from the token.
    private static func stem(_ token: String, with stemmer: any FTS5Tokenizer) -> String? {
        guard token.utf8.count >= 3, token.utf8.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) else { return nil }
        final class Box { var stem: String? }
        let box = Box()
        var bytes = Array(token.utf8)
        let code = bytes.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { pointer in
                withExtendedLifetime(box) {
                    stemmer.tokenize(context: Unmanaged.passUnretained(box).toOpaque(), tokenization: .document,
                                     pText: pointer, nText: CInt(buffer.count)) { context, _, pToken, nToken, _, _ in
                        guard let context, let pToken else { return SQLITE_OK }
                        let box = Unmanaged<Box>.fromOpaque(context).takeUnretainedValue()
                        box.stem = pToken.withMemoryRebound(to: UInt8.self, capacity: Int(nToken)) {
                            String(decoding: UnsafeBufferPointer(start: $0, count: Int(nToken)), as: UTF8.self)
                        }
                        return SQLITE_OK
                    }
                }
            }
        }
        guard code == SQLITE_OK, let stem = box.stem, stem != token, !stem.isEmpty else { return nil }
        return stem
    }
}

/// Renders a `TextQuery` as an FTS5 query string. Every token is quoted (inner quotes doubled), so no user text can
/// become an FTS5 operator; the only operators are the ones the query's structure asks for.
package enum FTS5Query {
    /// The FTS5 expression, or nil when the query cannot be one on its own: `nothing`, or a negation with no positive
    /// part beside it (FTS5's NOT is binary). `columns` restricts the match to those columns (`{a b} : (…)`).
    package static func render(_ query: TextQuery, columns: [String]? = nil) -> String? {
        guard let expression = expression(query) else { return nil }
        guard let columns, !columns.isEmpty else { return expression }
        let names = columns.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: " ")
        return "{\(names)} : (\(expression))"
    }

    /// The type-ahead query of `text` (all tokens, the last a prefix), or nil when it has no token.
    package static func typeAhead(_ text: String) -> String? {
        render(.allTokens(of: text, prefixLast: true))
    }

    static func quote(_ token: String) -> String {
        "\"" + token.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private static func expression(_ query: TextQuery) -> String? {
        switch query {
        case .nothing, .not: return nil
        case .term(let token, let prefix): return quote(token) + (prefix ? "*" : "")
        case .phrase(let tokens):
            guard !tokens.isEmpty else { return nil }
            return tokens.map(quote).joined(separator: " + ")
        case .or(let items):
            var parts: [String] = []
            for item in items {
                guard let part = expression(item) else { return nil }
                parts.append("(" + part + ")")
            }
            return parts.isEmpty ? nil : parts.joined(separator: " OR ")
        case .and(let items):
            var positives: [String] = []
            var negatives: [String] = []
            for item in items {
                if case .not(let inner) = item {
                    guard let part = expression(inner) else { return nil }
                    negatives.append("(" + part + ")")
                } else {
                    guard let part = expression(item) else { return nil }
                    positives.append("(" + part + ")")
                }
            }
            guard !positives.isEmpty else { return nil }
            return ([positives.joined(separator: " AND ")] + negatives).joined(separator: " NOT ")
        }
    }
}

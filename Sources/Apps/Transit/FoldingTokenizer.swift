import CaravanCore
import GRDB
import GRDBSQLite

/// The FTS5 tokenizer `caravan_fold`: `TextFolding` tokens, so the stop-name index and the queries fold alike
/// (Arabic letter forms, tashkeel, digits, Latin case and diacritics).
///
/// It must be registered on every connection that reads or writes the FTS table (`TransitDatabase` and the
/// importer do so); another SQLite client can read every other table of a bundle without it.
final class FoldingTokenizer: FTS5CustomTokenizer {
    static let name = "caravan_fold"

    init(db: Database, arguments: [String]) throws {}

    func tokenize(
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
        for token in TextFolding.tokenize(text) {
            // Offsets come from the decoded text; they equal the input's unless it held invalid UTF-8.
            let start = CInt(clamping: min(token.utf8Range.lowerBound, Int(nText)))
            let end = CInt(clamping: min(token.utf8Range.upperBound, Int(nText)))
            var bytes = Array(token.text.utf8)
            let code = bytes.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { pointer in
                    tokenCallback(context, 0, pointer, CInt(buffer.count), start, end)
                }
            }
            if code != SQLITE_OK { return code }
        }
        return SQLITE_OK
    }
}

/// The FTS5 query for user text: folded, split into tokens, every token quoted (inner quotes doubled), the last
/// one a prefix (`*`). No input can produce an FTS syntax error or an operator: `OR`, `NEAR(`, `"`, `*`, `-` are
/// either separators or quoted literals. nil when the text has no token (nothing can match).
///
/// ```swift
/// ftsQuery(for: "Orchard OR rd")  // "\"orchard\" \"or\" \"rd\"*"
/// ```
func ftsQuery(for text: String) -> String? {
    let tokens = TextFolding.tokens(in: text)
    guard !tokens.isEmpty else { return nil }
    var query = ""
    for (offset, token) in tokens.enumerated() {
        if offset > 0 { query += " " }
        query += "\"" + String(token.flatMap { $0 == "\"" ? ["\"", "\""] : [$0] }) + "\""
    }
    return query + "*"
}

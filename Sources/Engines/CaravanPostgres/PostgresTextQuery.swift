import CaravanCore
import CaravanSQL

/// `TextQuery` as a tsquery expression. The query's structure becomes SQL operators (`&&`, `||`, `!!`,
/// `tsquery_phrase`); every token is a bound parameter turned into a quoted lexeme by `caravan_query_term` or
/// `caravan_lexeme` (places-0003-search-postgres), so no user text reaches the SQL or tsquery syntax.
enum PostgresTextQuery {
    /// Longest lexeme Postgres stores (bytes): longer tokens are never in a document, so they never match.
    static let maximumLexemeBytes = 2046

    /// The query without parts that can never match (`nothing`, empty phrases, over-long tokens); nil when nothing
    /// of it can match.
    static func simplified(_ query: TextQuery) -> TextQuery? {
        switch query {
        case .nothing:
            return nil
        case .term(let token, _):
            return token.isEmpty || token.utf8.count > maximumLexemeBytes ? nil : query
        case .phrase(let tokens):
            guard !tokens.isEmpty, tokens.allSatisfy({ !$0.isEmpty && $0.utf8.count <= maximumLexemeBytes }) else { return nil }
            return tokens.count == 1 ? .term(tokens[0], prefix: false) : query
        case .and(let items):
            var kept: [TextQuery] = []
            for item in items {
                guard let simple = simplified(item) else { return nil }
                kept.append(simple)
            }
            return kept.isEmpty ? nil : (kept.count == 1 ? kept[0] : .and(kept))
        case .or(let items):
            let kept = items.compactMap(simplified)
            return kept.isEmpty ? nil : (kept.count == 1 ? kept[0] : .or(kept))
        case .not(let inner):
            return simplified(inner).map(TextQuery.not)
        }
    }

    /// Whether every document matching the query contains its positive terms (no negation): then a column's match
    /// implies the whole row's document matches, and the document's index can narrow the rows first.
    static func isMonotone(_ query: TextQuery) -> Bool {
        switch query {
        case .nothing, .term, .phrase: true
        case .and(let items), .or(let items): items.allSatisfy(isMonotone)
        case .not: false
        }
    }
}

extension PostgresSQL {
    /// Appends `query` (already `simplified`) as a tsquery expression and returns the appended text, whose
    /// placeholders may be used again in the same statement. `stemmed`: whole tokens become their English stem, as
    /// the documents of the search table hold them (`caravan_query_term`); otherwise every token is matched as folded.
    @discardableResult
    mutating func tsquery(_ query: TextQuery, stemmed: Bool) -> String {
        let before = text.count
        appendTSQuery(query, stemmed: stemmed)
        return String(text.dropFirst(before))
    }

    private mutating func appendTSQuery(_ query: TextQuery, stemmed: Bool) {
        switch query {
        case .nothing:
            append("NULL::tsquery")
        case .term(let token, let prefix):
            term(token, prefix: prefix, stemmed: stemmed)
        case .phrase(let tokens):
            for _ in tokens.dropFirst() { append("tsquery_phrase(") }
            for (i, token) in tokens.enumerated() {
                if i > 0 { append(", ") }
                term(token, prefix: false, stemmed: stemmed)
                if i > 0 { append(")") }
            }
        case .and(let items), .or(let items):
            let joiner: String
            if case .and = query { joiner = " && " } else { joiner = " || " }
            append("(")
            for (i, item) in items.enumerated() {
                if i > 0 { append(joiner) }
                appendTSQuery(item, stemmed: stemmed)
            }
            append(")")
        case .not(let inner):
            append("(!! ")
            appendTSQuery(inner, stemmed: stemmed)
            append(")")
        }
    }

    private mutating func term(_ token: String, prefix: Bool, stemmed: Bool) {
        if stemmed {
            append("caravan_query_term(")
            value(.text(token), as: .text)
            append(prefix ? ", TRUE)" : ", FALSE)")
        } else {
            append(prefix ? "(caravan_lexeme(" : "caravan_lexeme(")
            value(.text(token), as: .text)
            append(prefix ? ") || ':*')::tsquery" : ")::tsquery")
        }
    }

    /// A `fts` operator on one column. An indexed column is matched on its own document (`caravan_tsvector`, stems
    /// included, as the search table holds it), after the table's document index narrows the rows when the query
    /// has no negation. A column outside the index is matched on its folded tokens only, as SQLite's
    /// `caravan_text_match` does. A NULL column is unknown (NULL), so neither it nor its negation matches.
    mutating func textSearch(_ column: CaravanCore.Column, _ query: TextQuery, index: FullTextIndexReference?) {
        guard let query = PostgresTextQuery.simplified(query) else {
            append("(CASE WHEN \(Self.reference(column)) IS NULL THEN NULL ELSE FALSE END)")
            return
        }
        let name = Self.reference(column)
        let text = column.type == .textArray ? "array_to_string(\(name), ' ')" : name
        let document = index == nil
            ? "to_tsvector('simple', array_to_string(caravan_tokens(\(text)), ' '))"
            : "caravan_tsvector(\(text), 'D')"
        append("(CASE WHEN \(name) IS NULL THEN NULL ELSE \(document) @@ ")
        let expression = tsquery(query, stemmed: index != nil)
        if let index, PostgresTextQuery.isMonotone(query) {
            let key = (column.qualifier.map { Self.quote($0) + "." } ?? "") + Self.quote(index.primaryKey)
            let names = PostgresSearchNames(table: index.table)
            append(" AND \(key) IN (SELECT \(Self.quote(PostgresSearchNames.key)) FROM \(Self.quote(names.table)) WHERE \(Self.quote(PostgresSearchNames.document)) @@ \(expression))")
        }
        append(" END)")
    }
}

/// A full-text query over folded tokens (see `TextFolding`): what the PostgREST `fts`, `plfts`, `phfts` and `wfts`
/// operators and the search RPCs ask, independent of any engine.
///
/// Every leaf holds tokens produced by `TextFolding`, never raw user text, so an adapter that renders the query in
/// its engine's syntax can quote each token and no input can inject an operator (`OR`, `NEAR(`, `*`, `"`, `-`).
///
/// Semantics (also of `matches(_:)`, the in-memory evaluation): a document is the sequence of folded tokens of a
/// text; `term` matches when one token equals it (or, with `prefix`, starts with it); `phrase` when its tokens
/// appear consecutively; `and`/`or`/`not` as usual; `nothing` never matches (the query of a text without tokens,
/// like Postgres' empty tsquery).
public indirect enum TextQuery: Sendable, Hashable, Codable {
    case term(String, prefix: Bool)
    case phrase([String])
    case and([TextQuery])
    case or([TextQuery])
    case not(TextQuery)
    case nothing

    // MARK: Builders from user text (never throw; any input is safe)

    /// Every token of `text` must appear (Postgres `plainto_tsquery`). With `prefixLast`, the last token is a prefix
    /// (type-ahead).
    public static func allTokens(of text: String, prefixLast: Bool = false) -> TextQuery {
        let tokens = TextFolding.tokens(in: text)
        guard !tokens.isEmpty else { return .nothing }
        let terms = tokens.enumerated().map { index, token in
            TextQuery.term(token, prefix: prefixLast && index == tokens.count - 1)
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    /// Type-ahead over user text: every token must match; the last one either as a whole word (so it is stemmed:
    /// `cafes` finds `cafe`) or as the prefix of a word (`starb` finds `starbucks`).
    public static func typeAhead(_ text: String) -> TextQuery {
        let tokens = TextFolding.tokens(in: text)
        guard let last = tokens.last else { return .nothing }
        let lastTerm = TextQuery.or([.term(last, prefix: false), .term(last, prefix: true)])
        let terms = tokens.dropLast().map { TextQuery.term($0, prefix: false) } + [lastTerm]
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    /// The tokens of `text` as one phrase (Postgres `phraseto_tsquery`).
    public static func phrase(of text: String) -> TextQuery {
        word(TextFolding.tokens(in: text), prefix: false)
    }

    /// Postgres `websearch_to_tsquery`: words are ANDed, `"quoted text"` is a phrase, `or` between two items is OR,
    /// and `-` before an item negates it. Anything else is text.
    public static func websearch(_ text: String) -> TextQuery {
        var groups: [[TextQuery]] = [[]]   // OR of ANDs
        var pendingOr = false
        var negateNext = false
        var index = text.startIndex
        func add(_ item: TextQuery) {
            guard item != .nothing else { negateNext = false; return }
            let value = negateNext ? TextQuery.not(item) : item
            negateNext = false
            if pendingOr, !(groups.last?.isEmpty ?? true) {
                groups.append([value])
            } else {
                groups[groups.count - 1].append(value)
            }
            pendingOr = false
        }
        while index < text.endIndex {
            let character = text[index]
            if character == "\"" {
                let start = text.index(after: index)
                let end = text[start...].firstIndex(of: "\"") ?? text.endIndex
                add(phrase(of: String(text[start..<end])))
                index = end < text.endIndex ? text.index(after: end) : end
                continue
            }
            if character.isWhitespace { index = text.index(after: index); continue }
            if character == "-" {
                let previous = index == text.startIndex ? nil : text[text.index(before: index)]
                if previous == nil || previous!.isWhitespace { negateNext = true }
                index = text.index(after: index)
                continue
            }
            let end = text[index...].firstIndex { $0.isWhitespace || $0 == "\"" } ?? text.endIndex
            let word = String(text[index..<end])
            index = end
            if word.lowercased() == "or" {
                pendingOr = true
                continue
            }
            add(self.word(TextFolding.tokens(in: word), prefix: false))
        }
        let ors: [TextQuery] = groups.filter { !$0.isEmpty }.map { $0.count == 1 ? $0[0] : .and($0) }
        switch ors.count {
        case 0: return .nothing
        case 1: return ors[0]
        default: return .or(ors)
        }
    }

    /// Postgres `to_tsquery` syntax: `&`, `|`, `!`, `<->` (followed by, here: adjacent), parentheses, `'quoted'`
    /// lexemes and the `:*` prefix marker. A malformed query throws `invalidTextSearchQuery` (42601), as Postgres does;
    /// parentheses and `!` nested deeper than `QueryLimits.textQueryDepth` throw `limitExceeded`.
    public static func tsquery(_ text: String) throws(CaravanError) -> TextQuery {
        var parser = TSQueryParser(Array(text))
        return try parser.parse()
    }

    /// The tokens of one word: a term, or a phrase when the word folds into several tokens (`ca-va`).
    static func word(_ tokens: [String], prefix: Bool) -> TextQuery {
        switch tokens.count {
        case 0: return .nothing
        case 1: return .term(tokens[0], prefix: prefix)
        default:
            if prefix { return .and([.phrase(Array(tokens.dropLast())), .term(tokens[tokens.count - 1], prefix: true)]) }
            return .phrase(tokens)
        }
    }

    // MARK: In-memory evaluation

    /// Whether the folded tokens of `text` satisfy the query.
    public func matches(text: String) -> Bool {
        matches(tokens: TextFolding.tokens(in: text))
    }

    /// Whether a document made of `tokens` (already folded) satisfies the query.
    public func matches(tokens: [String]) -> Bool {
        switch self {
        case .nothing: return false
        case .term(let token, let prefix):
            return tokens.contains { prefix ? $0.hasPrefix(token) : $0 == token }
        case .phrase(let phrase):
            guard !phrase.isEmpty, tokens.count >= phrase.count else { return false }
            for start in 0...(tokens.count - phrase.count) where tokens[start..<start + phrase.count].elementsEqual(phrase) {
                return true
            }
            return false
        case .and(let items): return items.allSatisfy { $0.matches(tokens: tokens) }
        case .or(let items): return items.contains { $0.matches(tokens: tokens) }
        case .not(let inner): return !inner.matches(tokens: tokens)
        }
    }

    /// The positive terms of the query, for ranking and display.
    public var terms: [String] {
        switch self {
        case .nothing: []
        case .term(let token, _): [token]
        case .phrase(let tokens): tokens
        case .and(let items), .or(let items): items.flatMap(\.terms)
        case .not: []
        }
    }
}

/// Recursive descent over `to_tsquery` syntax; `(` and `!` nest at most `QueryLimits.textQueryDepth` deep, so the
/// recursion (and that of every later walk of the query: rendering, evaluation) is bounded.
struct TSQueryParser {
    private let characters: [Character]
    private var position = 0
    /// The `(` and `!` open around the current position.
    private var depth = 0

    init(_ characters: [Character]) { self.characters = characters }

    static func syntaxError(_ detail: String) -> CaravanError {
        CaravanError(.invalidTextSearchQuery, "syntax error in tsquery", details: detail)
    }

    mutating func parse() throws(CaravanError) -> TextQuery {
        skipSpaces()
        if position == characters.count { return .nothing }
        let query = try parseOr()
        skipSpaces()
        guard position == characters.count else { throw Self.syntaxError("unexpected \"\(characters[position])\"") }
        return query
    }

    private mutating func skipSpaces() {
        while position < characters.count, characters[position].isWhitespace { position += 1 }
    }

    private mutating func parseOr() throws(CaravanError) -> TextQuery {
        var items = [try parseAnd()]
        while true {
            skipSpaces()
            guard position < characters.count, characters[position] == "|" else { break }
            position += 1
            items.append(try parseAnd())
        }
        let kept = items.filter { $0 != .nothing }
        return kept.isEmpty ? .nothing : (kept.count == 1 ? kept[0] : .or(kept))
    }

    private mutating func parseAnd() throws(CaravanError) -> TextQuery {
        var items = [try parseUnary()]
        while true {
            skipSpaces()
            guard position < characters.count else { break }
            if characters[position] == "&" {
                position += 1
                items.append(try parseUnary())
            } else if characters[position] == "<" {
                guard let close = characters[position...].firstIndex(of: ">") else { throw Self.syntaxError("unterminated <->") }
                let inside = String(characters[(position + 1)..<close])
                guard inside == "-" || (!inside.isEmpty && inside.allSatisfy(\.isNumber)) else { throw Self.syntaxError("bad distance operator") }
                position = close + 1
                let right = try parseUnary()
                // "followed by": adjacent terms become a phrase; otherwise both must appear.
                if case .term(let a, false)? = items.last, case .term(let b, false) = right {
                    items[items.count - 1] = .phrase([a, b])
                } else if case .phrase(let a)? = items.last, case .term(let b, false) = right {
                    items[items.count - 1] = .phrase(a + [b])
                } else {
                    items.append(right)
                }
            } else {
                break
            }
        }
        let kept = items.filter { $0 != .nothing }
        return kept.isEmpty ? .nothing : (kept.count == 1 ? kept[0] : .and(kept))
    }

    /// One more level of `(` or `!`, refused past the limit.
    private mutating func enter() throws(CaravanError) {
        guard depth < QueryLimits.textQueryDepth else {
            throw QueryLimits.exceeded("nested parentheses and ! in a full-text query", limit: QueryLimits.textQueryDepth)
        }
        depth += 1
    }

    private mutating func parseUnary() throws(CaravanError) -> TextQuery {
        skipSpaces()
        guard position < characters.count else { throw Self.syntaxError("unexpected end of query") }
        switch characters[position] {
        case "!":
            position += 1
            try enter()
            defer { depth -= 1 }
            let inner = try parseUnary()
            return inner == .nothing ? .nothing : .not(inner)
        case "(":
            position += 1
            try enter()
            defer { depth -= 1 }
            let inner = try parseOr()
            skipSpaces()
            guard position < characters.count, characters[position] == ")" else { throw Self.syntaxError("missing )") }
            position += 1
            return inner
        case "&", "|", ")", "<":
            throw Self.syntaxError("unexpected \"\(characters[position])\"")
        default:
            return try parseWord()
        }
    }

    private mutating func parseWord() throws(CaravanError) -> TextQuery {
        var word = ""
        if characters[position] == "'" {
            position += 1
            while position < characters.count {
                if characters[position] == "'" {
                    if position + 1 < characters.count, characters[position + 1] == "'" { word.append("'"); position += 2; continue }
                    break
                }
                word.append(characters[position])
                position += 1
            }
            guard position < characters.count else { throw Self.syntaxError("unterminated quoted string") }
            position += 1
        } else {
            while position < characters.count {
                let c = characters[position]
                if c.isWhitespace || "&|!()<:".contains(c) { break }
                word.append(c)
                position += 1
            }
        }
        var prefix = false
        if position < characters.count, characters[position] == ":" {
            position += 1
            // Weights (`:A`) are accepted and ignored; `*` marks a prefix.
            while position < characters.count, "*ABCDabcd".contains(characters[position]) {
                if characters[position] == "*" { prefix = true }
                position += 1
            }
        }
        return TextQuery.word(TextFolding.tokens(in: word), prefix: prefix)
    }
}

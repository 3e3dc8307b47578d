public import CaravanCore

/// Random, replayable (seeded) text in every query grammar a request carries: filters (`col=op.value`, lists,
/// `any`/`all`), logic trees (`or=(and(not.or(…)))`), `select` with embeds, spreads, hints, casts, aggregates and JSON
/// paths, `order`, `fts` queries (`to_tsquery` syntax), realtime binding filters and sync pull parameters. Shapes
/// are both deep (nesting well past `QueryLimits`, sometimes thousands of levels) and wide (hundreds of items), valid
/// and broken, so a test can require that every one of them is answered (2xx or 4xx), never a crash or a 5xx.
public struct QueryFuzzer {
    public var random: SplitMix64
    /// Column names to use (valid ones of the table under test, and others).
    public let columns: [String]
    /// Table names to embed (related ones, and others).
    public let tables: [String]

    public init(seed: UInt64, columns: [String], tables: [String]) {
        random = SplitMix64(state: seed)
        self.columns = columns
        self.tables = tables
    }

    // MARK: Choices

    public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
    public mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }
    public mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// A nesting depth: usually within the limits, often just past them, now and then thousands of levels.
    public mutating func depth(limit: Int) -> Int {
        switch int(0...99) {
        case 0..<70: int(1...max(1, limit / 2))
        case 70..<85: int(max(1, limit - 1)...(limit + 2))
        case 85..<96: int(limit...(limit * 4))
        default: int(500...3000)
        }
    }

    /// A count of items: usually a few, sometimes hundreds.
    public mutating func width() -> Int { chance(95) ? int(1...4) : int(20...150) }

    // MARK: Grammars

    /// A column name, or a JSON path into one (`col->a->0->>b`, sometimes past `QueryLimits.jsonPathSteps`).
    public mutating func column() -> String {
        let base = pick(columns)
        guard chance(20) else { return base }
        let steps = depth(limit: QueryLimits.jsonPathSteps)
        var path = base
        for index in 0..<steps {
            let step = chance(30) ? String(int(0...5)) : pick(["a", "b", "key_1", "x"])
            path += (index == steps - 1 && chance(50) ? "->>" : "->") + step
        }
        return path
    }

    /// A value: numbers, words, quoted text, booleans, UUID-ish text, nothing, or junk.
    public mutating func scalar() -> String {
        switch int(0...9) {
        case 0: return String(int(-5...100))
        case 1: return pick(["true", "false", "null", "cafe", "kudu", "Riyadh", "2026-01-01T00:00:00Z"])
        case 2: return "\"" + pick(["a,b", "x)y", "(", "\\\"", ""]) + "\""
        case 3: return "aaaaaaaa-0000-4000-8000-00000000000a"
        case 4: return ""
        case 5: return String(repeating: pick(["(", ")", ",", ".", "\"", "{", "}", "!", "&"]), count: int(1...40))
        default: return pick(["1", "4.5", "*caf*", "%", "abc", "Kudu"])
        }
    }

    /// `(a,b,"c,d")` or `{a,b}` of `count` values.
    public mutating func list(braces: Bool) -> String {
        let count = chance(95) ? int(0...5) : (chance(80) ? int(100...2000) : int((QueryLimits.listItems - 5)...(QueryLimits.listItems + 5)))
        var items: [String] = []
        items.reserveCapacity(count)
        for _ in 0..<count { items.append(chance(80) ? String(int(0...9)) : scalar()) }
        let body = items.joined(separator: ",")
        return braces ? "{" + body + "}" : "(" + body + ")"
    }

    /// A query in `to_tsquery` syntax: words, `&`, `|`, `<->`, `!` and parentheses, nested to `depth(limit:)`.
    public mutating func textQuery() -> String {
        let levels = depth(limit: QueryLimits.textQueryDepth)
        var text = pick(["cafe", "'quoted word'", "star:*", "riyadh", "a"])
        for _ in 0..<levels {
            switch int(0...5) {
            case 0: text = "!" + text
            case 1: text = "(" + text + ")"
            case 2: text = "(" + pick(["cafe", "tea"]) + " & !" + text + ")"
            case 3: text = "(" + text + " | " + pick(["x", "y:*"]) + ")"
            case 4: text = pick(["a", "b"]) + " <-> (" + text + ")"
            default: text = "!(" + text + ")"
            }
        }
        if chance(5) { text += pick([")", "(", "&", "|", "<"]) }  // malformed
        return text
    }

    /// `[not.]op[(any|all)|(lang)].value` for a column filter.
    public mutating func operation() -> String {
        let negation = chance(20) ? "not." : ""
        switch int(0...11) {
        case 0: return negation + "in." + list(braces: false)
        case 1: return negation + pick(["eq", "neq", "lt", "gte", "like"]) + "(" + pick(["any", "all"]) + ")." + list(braces: true)
        case 2: return negation + pick(["fts", "plfts", "phfts", "wfts"]) + (chance(30) ? "(english)" : "") + "." + textQuery()
        case 3: return negation + "is." + pick(["null", "not_null", "true", "false", "unknown", "maybe"])
        case 4: return negation + pick(["cs", "cd", "ov"]) + "." + list(braces: true)
        case 5: return negation + pick(["match", "imatch"]) + "." + pick(["^c", "(a|b", "[", "x*"])
        case 6: return pick(["nope", "sl", "adj", ""]) + "." + scalar()
        default: return negation + pick(["eq", "neq", "gt", "gte", "lt", "lte", "like", "ilike", "isdistinct"]) + "." + scalar()
        }
    }

    /// A logic tree's value, `(item,item,…)`: conditions and `[not.]and(…)`/`[not.]or(…)` groups nested to
    /// `depth(limit:)` along one branch, each group `width()` wide.
    public mutating func logicTree() -> String {
        let levels = depth(limit: QueryLimits.logicTreeDepth)
        var inner = condition()
        for _ in 1..<max(1, levels) {
            var items = [inner]
            for _ in 1..<(levels <= 40 ? width() : int(1...2)) { items.append(condition()) }
            if items.count > 1 { items.swapAt(0, int(0...(items.count - 1))) }
            inner = (chance(40) ? "not." : "") + pick(["and", "or"]) + "(" + items.joined(separator: ",") + ")"
        }
        var top = [inner]
        if chance(50) { top.append(condition()) }
        var text = "(" + top.joined(separator: ",") + ")"
        if chance(5) { text.removeLast(int(1...min(3, text.count))) }  // unbalanced
        return text
    }

    /// `column.op.value` inside a logic tree.
    public mutating func condition() -> String {
        var op = operation()
        if op.hasPrefix("fts") || op.hasPrefix("not.fts") || op.hasPrefix("plfts") || op.hasPrefix("wfts") || op.hasPrefix("phfts") {
            // Inside a tree, a value with `,` or `)` must be quoted.
            if let dot = op.firstIndex(of: ".") {
                let head = op[...dot]
                let value = String(op[op.index(after: dot)...].filter { $0 != "\"" })
                op = head + "\"" + value + "\""
            }
        }
        return column() + "." + op
    }

    /// A `select=` value: columns (aliased, cast, JSON paths), `*`, aggregates, and embeds and spreads of `tables`
    /// with hints, nested to `depth(limit:)`, each level `width()` wide.
    public mutating func select() -> String {
        let levels = depth(limit: QueryLimits.selectDepth)
        var inner = selectItems()
        for _ in 0..<levels {
            let name = pick(tables)
            let items = levels <= 40 ? selectItems() : pick(columns)
            let head = switch int(0...9) {
            case 0: "alias:" + name
            case 1: "..." + name
            case 2: name + "!inner"
            case 3: name + "!" + pick(columns)
            default: name
            }
            inner = items + "," + head + "(" + inner + ")"
        }
        if chance(5) { inner += pick(["(", ")", ",", "::", "!"]) }  // malformed
        return inner
    }

    /// A few plain select items.
    public mutating func selectItems() -> String {
        var items: [String] = []
        for _ in 0..<width() {
            switch int(0...9) {
            case 0: items.append("*")
            case 1: items.append(pick(columns) + "::" + pick(["text", "int", "bigint", "float8", "boolean", "json", "nope"]))
            case 2: items.append("label:" + pick(columns))
            case 3: items.append(pick(["count()", pick(columns) + ".sum()", pick(columns) + ".max()"]))
            case 4: items.append(column())
            default: items.append(pick(columns))
            }
        }
        return items.joined(separator: ",")
    }

    /// An `order=` value of `width()` terms (sometimes past `QueryLimits.orderTerms`).
    public mutating func order() -> String {
        let count = chance(80) ? int(1...4) : int(QueryLimits.orderTerms - 2...QueryLimits.orderTerms + 40)
        var terms: [String] = []
        for _ in 0..<count {
            var term = chance(10) ? column() : pick(columns)
            if chance(50) { term += "." + pick(["asc", "desc", "bogus"]) }
            if chance(30) { term += "." + pick(["nullsfirst", "nullslast"]) }
            terms.append(term)
        }
        return terms.joined(separator: ",")
    }

    /// One random query string (percent-encoded) mixing every grammar: select, logic trees, filters (sometimes
    /// hundreds), order, paging, and parameters of embedded resources.
    public mutating func queryString() -> String {
        var pairs: [(String, String)] = []
        if chance(45) { pairs.append(("select", select())) }
        if chance(35) { pairs.append((pick(["or", "and", "not.or", "not.and"]), logicTree())) }
        let filters = chance(92) ? int(0...2) : int(QueryLimits().maxFilters - 3...QueryLimits().maxFilters + 20)
        for _ in 0..<filters { pairs.append((column(), operation())) }
        if chance(25) { pairs.append(("order", order())) }
        if chance(20) { pairs.append(("limit", pick(["0", "1", "5", "-1", "x"]))) }
        if chance(10) { pairs.append(("offset", pick(["0", "2", "-3"]))) }
        if chance(20) {
            let path = (0..<int(1...3)).map { _ in pick(tables) }.joined(separator: ".")
            pairs.append((path + "." + pick(["or", "order", "limit", pick(columns)]), pick([logicTree(), order(), "2", operation()])))
        }
        return pairs.map { Self.encode($0.0) + "=" + Self.encode($0.1) }.joined(separator: "&")
    }

    /// A realtime binding's `filter`: `col=op.value` segments, comma-separated (sometimes hundreds).
    public mutating func realtimeFilter() -> String {
        let count = chance(85) ? int(1...3) : int(QueryLimits().maxFilters - 3...QueryLimits().maxFilters + 30)
        var segments: [String] = []
        for _ in 0..<count { segments.append(column() + "=" + operation()) }
        return segments.joined(separator: ",")
    }

    /// Sync pull parameters: `tables` (names, junk, hundreds of them), `cursor` (base64 of nested or broken JSON, or
    /// junk) and `limit`.
    public mutating func syncPull() -> (tables: String?, cursor: String?, limit: Int?) {
        let count = chance(85) ? int(1...3) : int(60...300)
        let tables = chance(5) ? nil : (0..<count).map { _ in chance(80) ? pick(self.tables) : scalar() }.joined(separator: ",")
        var cursor: String?
        switch int(0...5) {
        case 0: cursor = nil
        case 1: cursor = scalar()
        case 2:
            let levels = int(1...3000)
            cursor = Self.base64URL(Array((String(repeating: "[", count: levels) + String(repeating: "]", count: levels)).utf8))
        case 3: cursor = Self.base64URL(Array(#"{"v":1,"e":"x","s":1,"p":{"t":"places","k":[[[["#.utf8))
        case 4: cursor = Self.base64URL((0..<int(1...200)).map { _ in UInt8(truncatingIfNeeded: int(0...255)) })
        default: cursor = ""
        }
        let limit: Int? = chance(30) ? nil : pick([1, 10, 100, 1000, 100_000, Int.max])
        return (tables, cursor, limit)
    }

    // MARK: Encoding

    /// Percent-encodes everything but unreserved characters.
    public static func encode(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF")
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "("), UInt8(ascii: ")"),
                 UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "!"), UInt8(ascii: "*"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out.append("%")
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            }
        }
        return out
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var out = ""
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = (UInt32(chunk[0]) << 16) | (chunk.count > 1 ? UInt32(chunk[1]) << 8 : 0) | (chunk.count > 2 ? UInt32(chunk[2]) : 0)
            for position in 0..<(chunk.count + 1) {
                out.append(alphabet[Int((value >> UInt32(18 - 6 * position)) & 0x3F)])
            }
            index += 3
        }
        return out
    }
}

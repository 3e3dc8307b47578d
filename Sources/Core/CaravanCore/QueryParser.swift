import Foundation

/// Parses the PostgREST query grammar (wire-protocol §2) into a typed `Query`.
///
/// Values are kept as written; typing against a column happens in `Predicate.bound(to:)`.
package enum QueryParser {
    /// Keys that are never filters.
    package static let reservedKeys: Set<String> = ["select", "columns", "on_conflict", "order", "limit", "offset", "and", "or"]

    /// Parses a read request's query string. Its conditions (embedded resources' included) and embedded resources
    /// are counted against `limits`; every grammar's nesting is bounded by `QueryLimits`' fixed limits.
    package static func parseRead(_ query: QueryString, limits: QueryLimits = QueryLimits()) throws(CaravanError) -> Query {
        var result = Query()
        for pair in query.pairs {
            let key = pair.key
            if let (path, parameter) = embeddedParameter(key) {
                var embedded = result.embedded[path] ?? Query()
                try apply(parameter, value: pair.value, to: &embedded)
                result.embedded[path] = embedded
                continue
            }
            try apply(key, value: pair.value, to: &result)
        }
        try limits.checkConditions(result.filters + result.embedded.values.flatMap(\.filters))
        try limits.checkEmbeds(result.select)
        return result
    }

    /// A parameter of an embedded resource: `messages.is_read` → (`messages`, `is_read`); `not.and`/`not.or` and keys
    /// without a dot are the top level's. The path is everything before the last dot.
    static func embeddedParameter(_ key: String) -> (path: String, parameter: String)? {
        guard key.contains("."), !["not.and", "not.or"].contains(key) else { return nil }
        var path = key
        var parameter = ""
        for logic in [".not.and", ".not.or"] where key.hasSuffix(logic) {
            path = String(key.dropLast(logic.count))
            parameter = String(logic.dropFirst())
        }
        if parameter.isEmpty, let dot = key.lastIndex(of: ".") {
            path = String(key[..<dot])
            parameter = String(key[key.index(after: dot)...])
        }
        guard !path.isEmpty, !parameter.isEmpty else { return nil }
        return (path, parameter)
    }

    /// Applies one query parameter (`select`, `order`, `limit`, `offset`, a logic tree or a column filter) to `result`.
    static func apply(_ key: String, value: String, to result: inout Query) throws(CaravanError) {
        switch key {
        case "select":
            result.select = try parseSelect(value)
        case "order":
            result.order = try parseOrder(value)
        case "limit":
            result.limit = try parseLimit(value)
        case "offset":
            result.offset = try parseOffset(value)
        case "and", "or", "not.and", "not.or":
            result.filters.append(try parseLogicTree(value, isOr: key.hasSuffix("or"), negated: key.hasPrefix("not.")))
        case "columns", "on_conflict", "":
            return
        default:
            result.filters.append(try parseFilter(column: key, value: value))
        }
    }

    // MARK: - Filters

    /// Parses one top-level filter `column=[not.]op[(any|all)].value`. The value is taken verbatim.
    package static func parseFilter(column: String, value: String) throws(CaravanError) -> Predicate {
        let column = unquoteIdentifier(column)
        guard let parsed = try parseOperation(Substring(value), unquoteValue: false) else {
            throw filterError(value, details: "unexpected \"\(value.prefix(1))\" expecting \"not\" or operator (eq, gt, ...)")
        }
        let condition = Condition(column: column, op: parsed.op, quantifier: parsed.quantifier, operand: parsed.operand, language: parsed.language)
        return parsed.negated ? .not(.condition(condition)) : .condition(condition)
    }

    struct ParsedOperation {
        var negated: Bool
        var op: FilterOperator
        var quantifier: Quantifier?
        var language: String?
        var operand: Operand
    }

    /// Parses `[not.]op[(mod)].value`; returns nil when the text has no operator shape.
    static func parseOperation(_ text: Substring, unquoteValue: Bool) throws(CaravanError) -> ParsedOperation? {
        var rest = text
        var negated = false
        if rest.hasPrefix("not.") {
            negated = true
            rest = rest.dropFirst(4)
        }
        guard let dot = rest.firstIndex(of: ".") else { return nil }
        let opToken = rest[..<dot]
        var valueText = rest[rest.index(after: dot)...]
        var opName = opToken
        var modifier: Substring?
        if let open = opToken.firstIndex(of: "(") {
            guard opToken.hasSuffix(")") else { return nil }
            opName = opToken[..<open]
            modifier = opToken[opToken.index(after: open)..<opToken.index(before: opToken.endIndex)]
        }
        guard let op = FilterOperator(rawValue: String(opName)) else { return nil }
        var quantifier: Quantifier?
        var language: String?
        if let modifier {
            switch op {
            case .fts, .plfts, .phfts, .wfts:
                guard !modifier.isEmpty, modifier.allSatisfy({ $0.isLetter || $0 == "_" }) else { return nil }
                language = String(modifier)
            default:
                guard let q = Quantifier(rawValue: String(modifier)) else { return nil }
                quantifier = q
            }
        }
        if unquoteValue, valueText.first == "\"", op != .in {
            guard let unquoted = unquote(valueText) else { return nil }
            valueText = Substring(unquoted)
        }
        let operand = try parseOperand(valueText, op: op, quantified: quantifier != nil, filter: text)
        return ParsedOperation(negated: negated, op: op, quantifier: quantifier, language: language, operand: operand)
    }

    /// The value part of `filter` for `op`: an `is` keyword, an `in` list, a `{…}` list (quantified, or an array
    /// operator's literal), or the text itself.
    static func parseOperand(_ valueText: Substring, op: FilterOperator, quantified: Bool, filter text: Substring) throws(CaravanError) -> Operand {
        switch op {
        case .is:
            guard let isValue = IsValue(rawValue: valueText.lowercased()) else {
                throw filterError(String(text), details: "unexpected \"\(valueText)\" expecting null, not_null, true, false or unknown")
            }
            return .isValue(isValue)
        case .in:
            guard let list = parseInList(valueText) else {
                throw filterError(String(text), details: "expecting a parenthesized list such as (a,b,\"c,d\")")
            }
            return .list(list)
        default:
            if quantified {
                guard let items = parseArrayLiteral(valueText) else {
                    throw filterError(String(text), details: "expecting a {…} list after an any/all modifier")
                }
                return .list(items)
            }
            if [.cs, .cd, .ov].contains(op), valueText.first == "{" {
                guard let items = parseArrayLiteral(valueText) else {
                    throw filterError(String(text), details: "malformed array literal")
                }
                return .list(items)
            }
            return .scalar(String(valueText))
        }
    }

    static func filterError(_ text: String, details: String) -> CaravanError {
        CaravanError(.parseError, "\"failed to parse filter (\(text))\" (line 1, column 1)", details: details)
    }

    /// Parses `(a,b,"c,d")`: elements are double-quoted (with `\` escaping the next character) or run to `,`/`)`.
    static func parseInList(_ text: Substring) -> [String?]? {
        guard text.first == "(", text.last == ")", text.count >= 2 else { return nil }
        let inner = text.dropFirst().dropLast()
        return splitElements(inner, nullIsSpecial: false)
    }

    /// Parses `{a,b,"c d"}`; an unquoted `NULL` is a null element.
    static func parseArrayLiteral(_ text: Substring) -> [String?]? {
        guard text.first == "{", text.last == "}", text.count >= 2 else { return nil }
        let inner = text.dropFirst().dropLast()
        return splitElements(inner, nullIsSpecial: true)
    }

    private static func splitElements(_ inner: Substring, nullIsSpecial: Bool) -> [String?]? {
        if inner.isEmpty { return [] }
        var items: [String?] = []
        var index = inner.startIndex
        while true {
            var element = ""
            var quoted = false
            if index < inner.endIndex, inner[index] == "\"" {
                quoted = true
                index = inner.index(after: index)
                var closed = false
                while index < inner.endIndex {
                    let c = inner[index]
                    if c == "\\" {
                        index = inner.index(after: index)
                        guard index < inner.endIndex else { return nil }
                        element.append(inner[index])
                    } else if c == "\"" {
                        closed = true
                        index = inner.index(after: index)
                        break
                    } else {
                        element.append(c)
                    }
                    index = inner.index(after: index)
                }
                guard closed else { return nil }
                guard index == inner.endIndex || inner[index] == "," else { return nil }
            } else {
                while index < inner.endIndex, inner[index] != "," {
                    element.append(inner[index])
                    index = inner.index(after: index)
                }
            }
            if nullIsSpecial, !quoted, element.uppercased() == "NULL" {
                items.append(nil)
            } else {
                items.append(element)
            }
            if index == inner.endIndex { break }
            index = inner.index(after: index) // skip ','
        }
        return items
    }

    /// Removes surrounding double quotes, honouring `\` escapes; nil when not a well-formed quoted string.
    static func unquote(_ text: Substring) -> String? {
        guard text.count >= 2, text.first == "\"", text.last == "\"" else { return nil }
        var out = ""
        var index = text.index(after: text.startIndex)
        let end = text.index(before: text.endIndex)
        while index < end {
            let c = text[index]
            if c == "\\" {
                index = text.index(after: index)
                guard index < end else { return nil }
                out.append(text[index])
            } else if c == "\"" {
                return nil
            } else {
                out.append(c)
            }
            index = text.index(after: index)
        }
        return out
    }

    static func unquoteIdentifier(_ name: String) -> String {
        if name.count >= 2, name.first == "\"", name.last == "\"", let inner = unquote(Substring(name)) { return inner }
        return name
    }

    // MARK: - Logic trees

    /// Parses the value of `or=`/`and=` (`(a.eq.1,and(b.gt.2,not.c.is.null))`), without recursion: groups nest at
    /// most `QueryLimits.logicTreeDepth` deep (the outermost included), deeper is `limitExceeded` (400 PGRST100).
    package static func parseLogicTree(_ text: String, isOr: Bool, negated: Bool) throws(CaravanError) -> Predicate {
        var parser = LogicTreeParser(text: Array(text.unicodeScalars))
        let items = try parser.parseTree()
        guard parser.atEnd else { throw parser.failure("unexpected characters after the closing parenthesis") }
        let tree: Predicate = isOr ? .or(items) : .and(items)
        return negated ? .not(tree) : tree
    }

    struct LogicTreeParser {
        let text: [Unicode.Scalar]
        var position = 0

        var atEnd: Bool { position == text.count }

        func failure(_ details: String) -> CaravanError {
            var source = String.UnicodeScalarView()
            source.append(contentsOf: text.prefix(200))
            if text.count > 200 { source.append(contentsOf: "…".unicodeScalars) }
            return CaravanError(.parseError, "\"failed to parse logic tree (\(String(source)))\" (line 1, column \(position + 1))", details: details)
        }

        func peek(_ literal: String) -> Bool {
            let scalars = Array(literal.unicodeScalars)
            guard position + scalars.count <= text.count else { return false }
            return Array(text[position..<position + scalars.count]) == scalars
        }

        /// An open `and(`/`or(` group: its items so far.
        private struct Group {
            let isOr: Bool
            let negated: Bool
            var items: [Predicate] = []
        }

        /// Parses `(item,item,…)`, where an item is a condition or a nested `[not.]and(…)`/`[not.]or(…)` group, with
        /// a stack of open groups instead of recursion; returns the outermost group's items.
        mutating func parseTree() throws(CaravanError) -> [Predicate] {
            guard position < text.count, text[position] == "(" else { throw failure("expecting \"(\"") }
            position += 1
            var open = [Group(isOr: false, negated: false)]
            while true {
                // An item: a nested group opens, or a condition is added to the innermost open group.
                var negated = false
                if peek("not.") { negated = true; position += 4 }
                if peek("and(") || peek("or(") {
                    let isOr = peek("or(")
                    guard open.count < QueryLimits.logicTreeDepth else {
                        throw QueryLimits.exceeded("nested and/or groups in a logic tree", limit: QueryLimits.logicTreeDepth,
                                                   hint: "Nest and(…), or(…) and not. groups fewer levels deep")
                    }
                    position += isOr ? 3 : 4
                    open.append(Group(isOr: isOr, negated: negated))
                    continue
                }
                open[open.count - 1].items.append(try parseCondition(negated: negated))
                // After an item: `,` starts the next one; each `)` closes the innermost group.
                while true {
                    guard position < text.count else { throw failure("expecting \")\"") }
                    if text[position] == "," { position += 1; break }
                    guard text[position] == ")" else { throw failure("expecting \",\" or \")\"") }
                    position += 1
                    let group = open.removeLast()
                    guard !open.isEmpty else { return group.items }
                    let tree: Predicate = group.isOr ? .or(group.items) : .and(group.items)
                    open[open.count - 1].items.append(group.negated ? .not(tree) : tree)
                }
            }
        }

        /// `field.[not.]operator[(modifier)].value`, negated when it followed `not.`.
        mutating func parseCondition(negated: Bool) throws(CaravanError) -> Predicate {
            let start = position
            // field
            var field = String.UnicodeScalarView()
            while position < text.count, text[position] != ".", text[position] != ",", text[position] != ")", text[position] != "(" {
                field.append(text[position])
                position += 1
            }
            guard position < text.count, text[position] == ".", !field.isEmpty else { throw failure("expecting field.operator.value") }
            position += 1
            // [not.]operator[(modifier)]
            var opText = String.UnicodeScalarView()
            if peek("not.") { opText.append(contentsOf: "not.".unicodeScalars); position += 4 }
            while position < text.count, text[position] != ".", text[position] != ",", text[position] != ")" {
                if text[position] == "(" {
                    while position < text.count, text[position] != ")" { opText.append(text[position]); position += 1 }
                    guard position < text.count else { throw failure("unterminated operator modifier") }
                }
                opText.append(text[position])
                position += 1
            }
            guard position < text.count, text[position] == "." else { throw failure("expecting an operator and a value") }
            position += 1
            let opString = String(opText)
            let isIn = opString == "in" || opString == "not.in"
            let value = try readValue(parenthesized: isIn)
            let combined = opString + "." + value
            guard let parsed = try QueryParser.parseOperation(Substring(combined), unquoteValue: true) else {
                position = start
                throw failure("unknown operator \"\(opString)\"")
            }
            let condition = Condition(column: QueryParser.unquoteIdentifier(String(field)), op: parsed.op, quantifier: parsed.quantifier, operand: parsed.operand, language: parsed.language)
            let predicate: Predicate = parsed.negated ? .not(.condition(condition)) : .condition(condition)
            return negated ? .not(predicate) : predicate
        }

        /// Reads a value: a quoted string (kept quoted, unquoted later), a `{…}` array, a `(…)` list, or text up to `,`/`)`.
        mutating func readValue(parenthesized: Bool) throws(CaravanError) -> String {
            var out = String.UnicodeScalarView()
            guard position < text.count else { return "" }
            let first = text[position]
            if first == "\"" {
                try readQuoted(into: &out)
                return String(out)
            }
            if first == "{" || (parenthesized && first == "(") {
                let close: Unicode.Scalar = first == "{" ? "}" : ")"
                out.append(first)
                position += 1
                while position < text.count, text[position] != close {
                    if text[position] == "\"" { try readQuoted(into: &out); continue }
                    out.append(text[position])
                    position += 1
                }
                guard position < text.count else { throw failure("unterminated list") }
                out.append(close)
                position += 1
                return String(out)
            }
            while position < text.count, text[position] != ",", text[position] != ")" {
                out.append(text[position])
                position += 1
            }
            return String(out)
        }

        mutating func readQuoted(into out: inout String.UnicodeScalarView) throws(CaravanError) {
            out.append(text[position])
            position += 1
            while position < text.count {
                let c = text[position]
                out.append(c)
                position += 1
                if c == "\\" {
                    guard position < text.count else { break }
                    out.append(text[position])
                    position += 1
                } else if c == "\"" {
                    return
                }
            }
            throw failure("unterminated quoted value")
        }
    }

    /// Parses `columns=a,"b c"` (also used for `on_conflict`).
    package static func parseColumnList(_ text: String) throws(CaravanError) -> [String] {
        let names = splitTopLevel(text).map { unquoteIdentifier($0.trimmingSpaces) }
        guard !names.contains(where: { $0.isEmpty }) else {
            throw CaravanError(.parseError, "\"failed to parse columns parameter (\(text))\" (line 1, column 1)")
        }
        return names
    }
}

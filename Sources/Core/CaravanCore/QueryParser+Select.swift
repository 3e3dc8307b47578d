import Foundation

extension QueryParser {
    // MARK: - Select, order, paging

    /// Parses `select=`: `*`, `col`, `alias:col`, `col::cast`, `alias:col::cast`, double-quoted names, aggregates and
    /// embedded resources, which nest at most `QueryLimits.selectDepth` deep.
    package static func parseSelect(_ text: String) throws(CaravanError) -> [SelectItem] {
        try parseSelect(text, depth: 0)
    }

    /// The items of a select list `depth` embeds deep.
    private static func parseSelect(_ text: String, depth: Int) throws(CaravanError) -> [SelectItem] {
        func failure(_ details: String) -> CaravanError {
            CaravanError(.parseError, "\"failed to parse select parameter (\(text.prefix(200))\(text.count > 200 ? "…" : ""))\" (line 1, column 1)",
                         details: details)
        }
        // Strip whitespace outside quotes.
        var stripped = ""
        var inQuotes = false
        for c in text {
            if c == "\"" { inQuotes.toggle() }
            if !inQuotes, c.isWhitespace { continue }
            stripped.append(c)
        }
        if inQuotes { throw failure("unterminated quoted name") }
        if stripped.isEmpty { return [.star] }
        var items: [SelectItem] = []
        for rawItem in splitTopLevel(stripped) {
            if rawItem.isEmpty { throw failure("empty select item") }
            if rawItem.hasPrefix("...") {
                guard rawItem.contains("(") else { throw failure("a spread needs an embedded resource: ...table(columns)") }
                var request = try parseEmbed(Substring(rawItem.dropFirst(3)), depth: depth + 1, failure: failure)
                guard request.alias == nil else { throw failure("a spread embed takes no alias") }
                request.spread = true
                items.append(.embed(request))
                continue
            }
            if let aggregate = try parseAggregate(rawItem, failure: failure) {
                items.append(.aggregate(aggregate))
                continue
            }
            if rawItem.contains("(") {
                items.append(.embed(try parseEmbed(Substring(rawItem), depth: depth + 1, failure: failure)))
                continue
            }
            if rawItem == "*" { items.append(.star); continue }
            var alias: String?
            var rest = Substring(rawItem)
            if let colon = aliasSeparator(in: rest) {
                alias = unquoteIdentifier(String(rest[..<colon]))
                rest = rest[rest.index(after: colon)...]
            }
            var cast: SelectCast?
            if let castRange = rest.range(of: "::") {
                let castName = rest[castRange.upperBound...]
                guard let parsedCast = SelectCast(named: String(castName)) else { throw failure("unknown cast \"\(castName)\"") }
                cast = parsedCast
                rest = rest[..<castRange.lowerBound]
            }
            let name = unquoteIdentifier(String(rest))
            guard !name.isEmpty, alias?.isEmpty != true else { throw failure("empty column name") }
            items.append(.column(name: name, alias: alias, cast: cast))
        }
        return items
    }

    /// `[alias:]count()[::cast]` or `[alias:]column[::cast].function()[::cast]`, as PostgREST parses them; nil when
    /// `text` is no aggregate (a column or an embedded resource).
    private static func parseAggregate(_ text: String, failure: (String) -> CaravanError) throws(CaravanError) -> AggregateRequest? {
        guard let call = text.range(of: "()", options: .backwards) else { return nil }
        var head = Substring(text[..<call.lowerBound])
        guard !head.contains("(") else { return nil }
        let tail = text[call.upperBound...]
        var alias: String?
        if let colon = aliasSeparator(in: head) {
            alias = unquoteIdentifier(String(head[..<colon]))
            head = head[head.index(after: colon)...]
        }
        let function: AggregateFunction
        var column: Substring?
        if head == "count" {
            function = .count
        } else if let dot = head.lastIndex(of: "."), let named = AggregateFunction(rawValue: String(head[head.index(after: dot)...])) {
            function = named
            column = head[..<dot]
        } else {
            return nil
        }
        guard alias?.isEmpty != true else { throw failure("empty alias") }
        var request = AggregateRequest(function: function, alias: alias)
        if !tail.isEmpty {
            guard tail.hasPrefix("::") else { throw failure("unexpected \"\(tail)\" after \(function.rawValue)()") }
            request.resultCast = try parseCast(tail.dropFirst(2), failure: failure)
        }
        if var column {
            if let castRange = column.range(of: "::") {
                request.inputCast = try parseCast(column[castRange.upperBound...], failure: failure)
                column = column[..<castRange.lowerBound]
            }
            let name = unquoteIdentifier(String(column))
            guard !name.isEmpty, name != "*" else { throw failure("an aggregate needs a column: column.\(function.rawValue)()") }
            request.column = name
        }
        return request
    }

    private static func parseCast(_ name: Substring, failure: (String) -> CaravanError) throws(CaravanError) -> SelectCast {
        guard let cast = SelectCast(named: String(name)) else { throw failure("unknown cast \"\(name)\"") }
        return cast
    }

    /// `[alias:]table[!hint][!inner|!left](items)` at `depth` (1 for an embed of the read's table), the items parsed
    /// as a select of their own.
    private static func parseEmbed(_ text: Substring, depth: Int, failure: (String) -> CaravanError) throws(CaravanError) -> EmbedRequest {
        guard let open = text.firstIndex(of: "("), text.last == ")" else { throw failure("unbalanced parentheses in \"\(text.prefix(200))\"") }
        guard depth <= QueryLimits.selectDepth else {
            throw QueryLimits.exceeded("levels of nested embedded resources", limit: QueryLimits.selectDepth,
                                       hint: "Embed fewer levels deep, or read the deeper rows with a second request")
        }
        var head = text[..<open]
        let inside = String(text[text.index(after: open)..<text.index(before: text.endIndex)])
        var alias: String?
        if let colon = aliasSeparator(in: head) {
            alias = unquoteIdentifier(String(head[..<colon]))
            head = head[head.index(after: colon)...]
        }
        var parts = head.split(separator: "!", omittingEmptySubsequences: false).map { unquoteIdentifier(String($0)) }
        let table = parts.removeFirst()
        var request = EmbedRequest(table: table, alias: alias)
        for part in parts {
            switch part {
            case "inner": request.inner = true
            case "left": request.inner = false
            case "": throw failure("empty hint in \"\(text)\"")
            default:
                guard request.hint == nil else { throw failure("more than one hint in \"\(text)\"") }
                request.hint = part
            }
        }
        guard !table.isEmpty, alias?.isEmpty != true else { throw failure("empty embedded resource name") }
        request.select = inside.isEmpty ? [.star] : try parseSelect(inside, depth: depth)
        for item in request.select {
            // JSON paths and an aggregate's input cast are computed by the engine and may be; a cast of a value is not yet.
            switch item {
            case .column(let name, _, let cast) where cast != nil:
                throw CaravanError(.unsupportedEmbedding, "A cast inside the embedded resource '\(request.name)' is not supported yet",
                                   hint: "Select '\(name)' without '::' inside the embed, or read it from its own endpoint")
            case .aggregate(let aggregate) where aggregate.resultCast != nil:
                throw CaravanError(.unsupportedEmbedding, "Casts of aggregates inside the embedded resource '\(request.name)' are not supported yet",
                                   hint: "Cast the aggregate's input instead: column::type.\(aggregate.function.rawValue)()")
            default: continue
            }
        }
        return request
    }

    /// The position of a single `:` (not part of `::`) outside quotes.
    private static func aliasSeparator(in text: Substring) -> String.Index? {
        var inQuotes = false
        var index = text.startIndex
        while index < text.endIndex {
            let c = text[index]
            if c == "\"" { inQuotes.toggle() }
            if !inQuotes, c == ":" {
                let next = text.index(after: index)
                if next < text.endIndex, text[next] == ":" { return nil }
                return index
            }
            index = text.index(after: index)
        }
        return nil
    }

    /// Splits on commas outside quotes and parentheses.
    static func splitTopLevel(_ text: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var depth = 0
        var inQuotes = false
        for c in text {
            if c == "\"" { inQuotes.toggle() }
            if !inQuotes {
                if c == "(" { depth += 1 }
                if c == ")" { depth -= 1 }
                if c == ",", depth == 0 {
                    parts.append(current)
                    current = ""
                    continue
                }
            }
            current.append(c)
        }
        parts.append(current)
        return parts
    }

    /// Parses `order=col[.asc|.desc][.nullsfirst|.nullslast][,…]`.
    package static func parseOrder(_ text: String) throws(CaravanError) -> [OrderTerm] {
        func failure(_ details: String) -> CaravanError {
            CaravanError(.parseError, "\"failed to parse order (\(text.prefix(200)))\" (line 1, column 1)", details: details)
        }
        var terms: [OrderTerm] = []
        let rawTerms = splitTopLevel(text)
        guard rawTerms.count <= QueryLimits.orderTerms else {
            throw QueryLimits.exceeded("terms in one order parameter", limit: QueryLimits.orderTerms)
        }
        for rawTerm in rawTerms {
            var parts = rawTerm.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            // A quoted column name may contain dots.
            if rawTerm.hasPrefix("\""), let closing = rawTerm.dropFirst().firstIndex(of: "\"") {
                let name = String(rawTerm[rawTerm.startIndex...closing])
                let tail = rawTerm[rawTerm.index(after: closing)...]
                parts = [name] + tail.split(separator: ".", omittingEmptySubsequences: false).dropFirst().map(String.init)
            }
            guard let first = parts.first, !first.trimmingSpaces.isEmpty else { throw failure("expecting a column name") }
            var direction: SortDirection?
            var nulls: NullsPlacement?
            for modifier in parts.dropFirst() {
                switch modifier {
                case "asc" where direction == nil: direction = .ascending
                case "desc" where direction == nil: direction = .descending
                case "nullsfirst" where nulls == nil: nulls = .first
                case "nullslast" where nulls == nil: nulls = .last
                default: throw failure("unexpected \"\(modifier)\" expecting \"asc\", \"desc\", \"nullsfirst\" or \"nullslast\"")
                }
            }
            terms.append(OrderTerm(column: unquoteIdentifier(first.trimmingSpaces), direction: direction ?? .ascending, nulls: nulls))
        }
        return terms
    }

    static func parseLimit(_ text: String) throws(CaravanError) -> Int {
        guard let value = Int(text) else {
            throw CaravanError(.parseError, "\"failed to parse limit (\(text))\" (line 1, column 1)", details: "expecting a non-negative integer")
        }
        guard value >= 0 else {
            throw CaravanError(.invalidRange, "Requested range not satisfiable", details: "Limit should be greater than or equal to zero.")
        }
        return value
    }

    static func parseOffset(_ text: String) throws(CaravanError) -> Int {
        guard let value = Int(text), value >= 0 else {
            throw CaravanError(.parseError, "\"failed to parse offset (\(text))\" (line 1, column 1)", details: "expecting a non-negative integer")
        }
        return value
    }
}

public extension String {
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while scalars.first?.isWhitespace == true { scalars = scalars.dropFirst() }
        while scalars.last?.isWhitespace == true { scalars = scalars.dropLast() }
        return String(scalars)
    }
}

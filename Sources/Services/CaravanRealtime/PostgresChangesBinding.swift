package import CaravanCore
import Foundation

/// Which change kinds a binding asks for.
package enum ChangeEventFilter: String, Sendable, Hashable {
    case all = "*"
    case insert = "INSERT"
    case update = "UPDATE"
    case delete = "DELETE"

    /// Whether an event of `type` (INSERT/UPDATE/DELETE as delivered) passes.
    package func admits(_ type: DeliveredEvent) -> Bool {
        switch self {
        case .all: true
        case .insert: type == .insert
        case .update: type == .update
        case .delete: type == .delete
        }
    }
}

/// The event type a subscriber receives (after moves are applied).
package enum DeliveredEvent: String, Sendable, Hashable {
    case insert = "INSERT"
    case update = "UPDATE"
    case delete = "DELETE"
}

/// One `postgres_changes` binding of a join, resolved against the catalog.
package struct PostgresChangesBinding: Sendable, Hashable {
    /// The reply id, unique within the channel.
    package let id: Int
    package let event: ChangeEventFilter
    /// The tables it covers (one, or every REST table for `*` / no table).
    package let tables: [String]
    /// The binding's filter bound to its table (`.constant(true)` without one).
    package let filter: BoundPredicate
    /// The columns asked for (primary key included), nil for all.
    package let select: [String]?
    /// The binding as the client sent it, plus `id`: what the join reply echoes.
    package let echo: JSONValue
}

/// Parses a join's `config.postgres_changes` into bindings; every problem is a join error (wire-protocol §4.2).
package enum BindingParser {
    package static func parse(_ config: JSONValue?, catalog: Catalog, firstID: Int, limits: QueryLimits = QueryLimits())
        throws(RealtimeError) -> [PostgresChangesBinding] {
        guard let config, config != .null else { return [] }
        guard case .array(let items) = config else { throw RealtimeError(.invalidJoin, "postgres_changes must be an array") }
        var bindings: [PostgresChangesBinding] = []
        for (offset, item) in items.enumerated() {
            bindings.append(try parseOne(item, catalog: catalog, id: firstID + offset, limits: limits))
        }
        return bindings
    }

    static func parseOne(_ item: JSONValue, catalog: Catalog, id: Int, limits: QueryLimits) throws(RealtimeError) -> PostgresChangesBinding {
        guard case .object(var pairs) = item else { throw RealtimeError(.invalidJoin, "a postgres_changes binding must be an object") }
        guard case .string(let eventText)? = item["event"], let event = ChangeEventFilter(rawValue: eventText.uppercased()) else {
            throw RealtimeError(.invalidJoin, "event must be one of *, INSERT, UPDATE, DELETE")
        }
        switch item["schema"] {
        case nil, .null?, .string("public")?, .string("*")?: break  // realtime-py sends null for the default schema
        default: throw RealtimeError(.invalidJoin, "schema must be \"public\"")
        }
        let tableName = try optionalString(item["table"], key: "table")
        let tables: [TableSchema]
        if let tableName, tableName != "*" {
            do {
                tables = [try catalog.requireExposedTable(tableName)]
            } catch {
                throw RealtimeError(.invalidJoin, "Unable to subscribe to changes with given parameters: unknown table \"\(tableName)\"")
            }
        } else {
            tables = catalog.allTables.filter { $0.exposure == .rest }
        }
        var filter = BoundPredicate.constant(true)
        if let filterText = try optionalString(item["filter"], key: "filter"), !filterText.isEmpty {
            guard tables.count == 1 else { throw RealtimeError(.invalidJoin, "a filter needs a table") }
            filter = try RealtimeFilter.parse(filterText, table: tables[0], limits: limits)
        }
        let select = try parseSelect(item["select"], tables: tables)
        pairs.removeAll { $0.key == "id" }
        pairs.append((key: "id", value: .integer(Int64(id))))
        return PostgresChangesBinding(id: id, event: event, tables: tables.map(\.name), filter: filter, select: select, echo: .object(pairs))
    }

    private static func optionalString(_ value: JSONValue?, key: String) throws(RealtimeError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw RealtimeError(.invalidJoin, "\(key) must be a string")
        }
    }

    /// `select` is an array of column names; the primary key is always added.
    static func parseSelect(_ value: JSONValue?, tables: [TableSchema]) throws(RealtimeError) -> [String]? {
        switch value {
        case nil, .null?: return nil
        case .array(let items)?:
            guard tables.count == 1 else { throw RealtimeError(.invalidJoin, "select needs a table") }
            let table = tables[0]
            var names = table.primaryKey
            for item in items {
                guard case .string(let name) = item else { throw RealtimeError(.invalidJoin, "select must be an array of column names") }
                guard table.column(named: name) != nil else { throw RealtimeError(.invalidJoin, "select names an unknown column \"\(name)\"") }
                if !names.contains(name) { names.append(name) }
            }
            return names
        default:
            throw RealtimeError(.invalidJoin, "select must be an array of column names")
        }
    }
}

/// Realtime binding filters: `col=<op>.<value>` segments, ANDed, separated by commas outside `()` and quotes. The
/// conditions are counted against `QueryLimits.maxFilters`, and the grammars inside a value (JSON paths, `fts`
/// queries, lists) are bounded as a REST filter's are; past a limit the join is refused, naming it.
package enum RealtimeFilter {
    package static func parse(_ text: String, table: TableSchema, limits: QueryLimits = QueryLimits()) throws(RealtimeError) -> BoundPredicate {
        var predicates: [CaravanCore.Predicate] = []
        do {
            for segment in split(text) {
                guard let equals = segment.firstIndex(of: "=") else {
                    throw RealtimeError(.invalidJoin, "invalid filter: expected column=operator.value")
                }
                let column = String(segment[..<equals]).trimmingSpaces
                let value = unquoteScalar(String(segment[segment.index(after: equals)...]))
                predicates.append(try QueryParser.parseFilter(column: column, value: value))
                if predicates.count > limits.maxFilters { try limits.checkConditions(predicates) }
            }
            try limits.checkConditions(predicates)
            var parts: [BoundPredicate] = []
            for predicate in predicates { parts.append(try predicate.bound(to: table)) }
            return parts.count == 1 ? parts[0] : .and(parts)
        } catch let error as RealtimeError {
            throw error
        } catch let error as CaravanError {
            let details = error.code == .limitExceeded ? error.details.map { " (\($0))" } ?? "" : ""
            throw RealtimeError(.invalidJoin, "invalid filter: \(error.message)\(details)")
        } catch {
            throw RealtimeError(.invalidJoin, "invalid filter")
        }
    }

    /// Splits at commas that are outside parentheses and double quotes.
    static func split(_ text: String) -> [Substring] {
        var segments: [Substring] = []
        var depth = 0
        var quoted = false
        var start = text.startIndex
        var index = text.startIndex
        while index < text.endIndex {
            switch text[index] {
            case "\"": quoted.toggle()
            case "(" where !quoted: depth += 1
            case ")" where !quoted: depth -= 1
            case "," where !quoted && depth == 0:
                segments.append(text[start..<index])
                start = text.index(after: index)
            default: break
            }
            index = text.index(after: index)
        }
        segments.append(text[start...])
        return segments.filter { !$0.isEmpty }
    }

    /// `eq."a,b"` → `eq.a,b` (lists keep their quotes: the list parser reads them).
    static func unquoteScalar(_ value: String) -> String {
        if value.hasPrefix("not.") { return "not." + unquoteScalar(String(value.dropFirst(4))) }
        guard let dot = value.firstIndex(of: ".") else { return value }
        let rest = value[value.index(after: dot)...]
        guard rest.count >= 2, rest.first == "\"", rest.last == "\"" else { return value }
        return String(value[...dot]) + rest.dropFirst().dropLast().replacingOccurrences(of: "\\\"", with: "\"")
    }
}

/// A typed value as it crosses the storage port.
///
/// JSON-valued columns (JSON objects and text arrays) carry canonical JSON text in `.json`,
/// so they can be emitted without re-encoding.
public enum Value: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case text(String)
    /// Canonical JSON text.
    case json(String)

    public var isNull: Bool { if case .null = self { return true } else { return false } }
}

/// One row to write: column names and their values, in the same order.
public struct RowValues: Sendable, Hashable {
    public var columns: [String]
    public var values: [Value]

    public init(columns: [String], values: [Value]) {
        precondition(columns.count == values.count, "columns and values must pair up")
        self.columns = columns
        self.values = values
    }

    public init(_ pairs: KeyValuePairs<String, Value>) {
        self.columns = pairs.map(\.key)
        self.values = pairs.map(\.value)
    }

    /// Adds `column` with `value` at the end.
    public mutating func append(_ column: String, _ value: Value) {
        columns.append(column)
        values.append(value)
    }

    /// The value of `column`, or nil when the row does not mention it.
    /// Sets `column` to `value`, replacing its value when the row names it already.
    public mutating func set(_ column: String, _ value: Value) {
        if let i = columns.firstIndex(of: column) { values[i] = value } else { append(column, value) }
    }

    public subscript(column: String) -> Value? {
        guard let index = columns.firstIndex(of: column) else { return nil }
        return values[index]
    }
}

extension JSONValue {
    /// A storage value as JSON: JSON text parsed (text that does not parse becomes null), everything else as its scalar.
    public init(_ value: Value) {
        switch value {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .integer(let i): self = .integer(i)
        case .double(let d): self = .double(d)
        case .text(let s): self = .string(s)
        case .json(let raw): self = (try? JSONParser.parse(raw)) ?? .null
        }
    }
}

package import CaravanCore
import Foundation
import GRDB

/// How a mirrored column is kept in the local SQLite store and read back as the JSON REST and sync send:
/// text, uuid, timestamp and date as TEXT; integer as INTEGER; boolean as INTEGER 0/1; double and decimal as REAL;
/// json and text arrays as JSON text.
enum LocalValues {
    static func physicalType(_ type: ColumnType) -> String {
        switch type {
        case .text, .uuid, .timestamp, .date, .json, .textArray: "TEXT"
        case .integer, .boolean: "INTEGER"
        case .double, .decimal: "REAL"
        }
    }

    static func databaseValue(_ json: JSONValue, for column: CaravanCore.Column) throws -> DatabaseValue {
        switch (column.type, json) {
        case (_, .null): return .null
        case (.json, _): return json.jsonText.databaseValue
        case (.textArray, .array): return json.jsonText.databaseValue
        case (.boolean, .bool(let b)): return (b ? 1 : 0).databaseValue
        case (.integer, .integer(let i)): return i.databaseValue
        case (.double, .integer(let i)), (.decimal, .integer(let i)): return Double(i).databaseValue
        case (.double, .double(let d)), (.decimal, .double(let d)): return d.databaseValue
        case (.uuid, .string(let s)): return (ColumnType.canonicalUUID(s) ?? s).databaseValue
        case (.text, .string(let s)), (.timestamp, .string(let s)), (.date, .string(let s)): return s.databaseValue
        default:
            throw LocalStorageError.badValue(column: column.name, "column \(column.name) cannot hold \(json.jsonText.prefix(64))")
        }
    }

    static func json(_ value: DatabaseValue, for column: CaravanCore.Column) -> JSONValue {
        switch value.storage {
        case .null: return .null
        case .int64(let i):
            return column.type == .boolean ? .bool(i != 0) : .integer(i)
        case .double(let d):
            return .double(d)
        case .string(let s):
            switch column.type {
            case .json, .textArray: return (try? JSONParser.parse(s)) ?? .null
            default: return .string(s)
            }
        case .blob(let data):
            return .string(String(decoding: data, as: UTF8.self))
        }
    }
}

extension TableSchema {
    /// The primary key of `object` as canonical JSON text (key order of the schema), or nil when a part is missing.
    package func keyText(of object: JSONValue) -> String? {
        var pairs: [(key: String, value: JSONValue)] = []
        for name in primaryKey {
            guard let value = object[name], value != .null else { return nil }
            if case .string(let s) = value, column(named: name)?.type == .uuid {
                pairs.append((name, .string(ColumnType.canonicalUUID(s) ?? s)))
            } else {
                pairs.append((name, value))
            }
        }
        return JSONValue.object(pairs).jsonText
    }
}

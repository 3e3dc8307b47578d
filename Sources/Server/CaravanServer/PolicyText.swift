package import CaravanCore
import Foundation

/// A policy expression written out for a person (the admin console's policy view), in SQL-like words:
/// `user_id = auth.uid()`, `is_public = true or owner_id = auth.uid()`,
/// `exists a row in group_members where group_members.group_id = group_id and group_members.user_id = auth.uid()`.
/// Unqualified names are columns of the guarded row. It is a reading aid, never parsed back or run.
package enum PolicyText {
    /// The text of `rule`.
    package static func render(_ rule: PolicyRule) -> String {
        switch rule {
        case .always(let value): return value ? "true" : "false"
        case .and(let items):
            return items.isEmpty ? "true" : items.map { nested($0, inside: .and) }.joined(separator: " and ")
        case .or(let items):
            return items.isEmpty ? "false" : items.map { nested($0, inside: .or) }.joined(separator: " or ")
        case .not(.isNull(let operand)): return "\(render(operand)) is not null"
        case .not(let inner): return "not (\(render(inner)))"
        case .compare(let lhs, let op, let rhs): return "\(render(lhs)) \(symbol(op)) \(render(rhs))"
        case .isNull(let operand): return "\(render(operand)) is null"
        case .isIn(let operand, let list): return "\(render(operand)) in (\(list.map(render).joined(separator: ", ")))"
        case .exists(let table, let conditions):
            let parts = conditions.map { condition -> String in
                switch condition {
                case .matchesOuter(let inner, let outer): "\(table).\(inner) = \(outer)"
                case .equals(let inner, let operand): "\(table).\(inner) = \(render(operand))"
                }
            }
            return "exists a row in \(table)" + (parts.isEmpty ? "" : " where " + parts.joined(separator: " and "))
        case .inOwnerFolder(let bucket, let path):
            return "\(path) is under the folder auth.uid()/ when \(bucket) is a bucket of owner folders"
        }
    }

    /// The text of an operand: a column name, a literal in SQL spelling, `auth.uid()`, a claim, `auth.role()`.
    package static func render(_ operand: PolicyOperand) -> String {
        switch operand {
        case .column(let name): return name
        case .authUID: return "auth.uid()"
        case .role: return "auth.role()"
        case .claim(let path):
            guard let last = path.last else { return "auth.jwt()" }
            return (["auth.jwt()"] + path.dropLast().map { "'\($0)'" }).joined(separator: " -> ") + " ->> '\(last)'"
        case .literal(let value): return literal(value)
        }
    }

    private enum Joiner { case and, or }

    /// An `or` inside an `and` (and the reverse) gets parentheses, so the reading keeps the tree's grouping.
    private static func nested(_ rule: PolicyRule, inside joiner: Joiner) -> String {
        switch (rule, joiner) {
        case (.or(let items), .and) where items.count > 1, (.and(let items), .or) where items.count > 1: "(\(render(rule)))"
        default: render(rule)
        }
    }

    private static func literal(_ value: Value) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .integer(let number): String(number)
        case .double(let number): String(number)
        case .text(let text): "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .json(let text): "'" + text.replacingOccurrences(of: "'", with: "''") + "'::jsonb"
        }
    }

    private static func symbol(_ op: ComparisonOperator) -> String {
        switch op {
        case .eq: "="
        case .neq: "<>"
        case .gt: ">"
        case .gte: ">="
        case .lt: "<"
        case .lte: "<="
        case .isDistinct: "is distinct from"
        }
    }
}

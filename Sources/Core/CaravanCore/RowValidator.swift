/// Validates rows against their table before a write: known columns, NOT NULL and CHECK constraints,
/// with the Postgres error codes (PGRST204, 23502, 23514). Build one per table and reuse it: the checks are bound once.
/// A class: a transaction keeps one per table and hands it out per row, so a row costs one reference, not a copy of
/// the table schema.
package final class RowValidator: Sendable {
    package let table: TableSchema
    private let checks: [(name: String, rule: BoundPredicate)]

    package init(table: TableSchema) throws(CaravanError) {
        self.table = table
        var checks: [(name: String, rule: BoundPredicate)] = []
        for check in table.checks { checks.append((check.name, try check.rule.bound(to: table))) }
        self.checks = checks
    }

    /// Validates `row` against `table` (binding its checks for this call only).
    package static func validate(_ row: RowValues, for table: TableSchema) throws(CaravanError) {
        try RowValidator(table: table).validate(row)
    }

    package func validate(_ row: RowValues) throws(CaravanError) {
        for name in row.columns where table.column(named: name) == nil {
            throw CaravanError(.unknownBodyColumn, "Could not find the '\(name)' column of '\(table.name)' in the schema cache")
        }
        for column in table.columns where !column.isNullable {
            let provided = row[column.name]
            let isMissingWithoutDefault = provided == nil && column.defaultValue == nil
            if provided?.isNull == true || isMissingWithoutDefault {
                throw CaravanError(
                    .notNullViolation,
                    "null value in column \"\(column.name)\" of relation \"\(table.name)\" violates not-null constraint"
                )
            }
        }
        for check in checks {
            let verdict = check.rule.evaluate { name in
                if let value = row[name] { return value }
                if case .value(let value)? = table.column(named: name)?.defaultValue { return value }
                return .null
            }
            if verdict == false {
                throw CaravanError(
                    .checkViolation,
                    "new row for relation \"\(table.name)\" violates check constraint \"\(check.name)\""
                )
            }
        }
    }
}

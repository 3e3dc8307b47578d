/// Validates a row against its table before a write: known columns, NOT NULL and CHECK constraints,
/// with the Postgres error codes (PGRST204, 23502, 23514).
public enum RowValidator {
    public static func validate(_ row: RowValues, for table: TableSchema) throws(CaravanError) {
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
        for check in table.checks {
            let rule = try check.rule.bound(to: table)
            let verdict = rule.evaluate { name in
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

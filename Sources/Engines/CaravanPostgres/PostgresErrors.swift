import CaravanCore
import Foundation
import PostgresNIO

/// Maps postgres-nio errors to Caravan codes. Server errors keep Postgres' own client-safe message (it names
/// constraints and columns, as PostgREST shows it); everything else goes to `internalDetail` only.
enum PostgresErrors {
    static func translate(_ error: any Error, table: TableSchema?) -> CaravanError {
        if let error = error as? CaravanError { return error }
        guard let error = error as? PSQLError else {
            return CaravanError(.storageUnavailable, "The database is temporarily unavailable", internalDetail: String(reflecting: error))
        }
        let detail = String(reflecting: error)
        guard error.code == .server, let info = error.serverInfo, let state = info[.sqlState] else {
            if error.code == .tooManyParameters {
                return tooComplex(detail)
            }
            // Connection refused, closed or reset, the pool shut down, a failed handshake.
            return CaravanError(.storageUnavailable, "The database is temporarily unavailable", internalDetail: detail)
        }
        let message = info[.message] ?? "database error"
        switch state {
        case "23505":
            return CaravanError(.uniqueViolation, message, details: keyColumns(info[.detail]).map { "Key (\($0)) already exists." }, internalDetail: detail)
        case "23503":
            // PostgreSQL's own detail, as PostgREST shows it: `Key (place_id)=(x) is not present in table "places".`
            return CaravanError(.foreignKeyViolation, message, details: info[.detail], internalDetail: detail)
        case "23514":
            return CaravanError(.checkViolation, message, internalDetail: detail)
        case "23502":
            return CaravanError(.notNullViolation, message, internalDetail: detail)
        case "22P02", "22007", "22008", "22023", "22021":
            return CaravanError(.invalidValue, message, internalDetail: detail)
        case "25006":
            // A write in a read-only transaction (or on a standby), as PostgREST answers it: 400 25006.
            return CaravanError(.readOnlyDatabase, message, internalDetail: detail)
        case "22003":
            return CaravanError(.numericOutOfRange, message, internalDetail: detail)
        case "2201B":
            return CaravanError(.invalidRegularExpression, message, internalDetail: detail)
        case "22025":
            return CaravanError(.invalidEscapeSequence, message, internalDetail: detail)
        case "54000", "54001", "54011", "54023":
            // Program limits: stack depth, statement complexity, columns, function arguments.
            return tooComplex(detail)
        default:
            // Class 08 (connection), 40 (serialization, deadlock), 53 (resources), 57 (shutdown): retryable.
            if ["08", "40", "53", "57"].contains(String(state.prefix(2))) {
                return CaravanError(.storageUnavailable, "The database is temporarily unavailable", internalDetail: detail)
            }
            return CaravanError(.internalFailure, "An internal error occurred", internalDetail: "table \(table?.name ?? "-"): \(detail)")
        }
    }

    /// The `400 PGRST100` of a statement PostgreSQL refuses as too large or too deeply nested (class 54, or more
    /// bound parameters than the protocol carries).
    static func tooComplex(_ detail: String) -> CaravanError {
        CaravanError(.limitExceeded, "The request nests too deeply or asks too much for the PostgreSQL engine",
                     details: "Its embedded resources, filters and full-text queries together exceed what PostgreSQL takes",
                     hint: "Embed fewer levels, or nest fewer and/or/not groups", internalDetail: detail)
    }

    /// The column list of a unique violation's detail (`Key (a, b)=(…) already exists.`), without the values.
    static func keyColumns(_ detail: String?) -> String? {
        guard let detail, detail.hasPrefix("Key ("), let end = detail.range(of: ")=(") else { return nil }
        return String(detail[detail.index(detail.startIndex, offsetBy: 5)..<end.lowerBound])
    }

    /// Whether the error is a serialization failure (40001) or a deadlock (40P01): the transaction was rolled back
    /// because of a concurrent one, and running it again is safe.
    static func isConflict(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server, let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40001" || state == "40P01"
    }

    /// Whether the error means the connection (and so the transaction) is gone: a client-side connection error,
    /// or a server error of severity FATAL or PANIC (such as 57P01 when the server shuts down), after which the
    /// server closes the connection. No statement may follow on it (postgres-nio never answers one).
    static func endsTransaction(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return !(error is CaravanError) }
        guard error.code == .server else { return true }
        return ["FATAL", "PANIC"].contains(error.serverInfo?[.severity] ?? "")
    }
}

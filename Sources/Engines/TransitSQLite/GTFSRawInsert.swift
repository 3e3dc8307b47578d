import CaravanCore
import GRDB
import GRDBSQLite
import Transit

/// A prepared INSERT bound through the SQLite C API (the importer's hot path: no boxing per value).
struct RawInsert {
    enum Cell {
        case int(Int?)
        case text(String?)
        case real(Double?)
    }

    private let statement: Statement

    init(_ db: Database, _ sql: String) throws {
        statement = try db.makeStatement(sql: sql)
    }

    func run(_ cells: Cell...) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        for (offset, cell) in cells.enumerated() {
            let position = CInt(offset + 1)
            switch cell {
            case .int(let value?): sqlite3_bind_int64(handle, position, Int64(value))
            case .real(let value?): sqlite3_bind_double(handle, position, value)
            case .text(let value?):
                _ = value.withCString { sqlite3_bind_text(handle, position, $0, -1, RawInsert.transient) }
            case .int(nil), .real(nil), .text(nil): sqlite3_bind_null(handle, position)
            }
        }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            let message = String(cString: sqlite3_errmsg(sqlite3_db_handle(handle)))
            sqlite3_reset(handle)
            throw CaravanError(.internalFailure, "the bundle cannot be written", internalDetail: "sqlite \(code): \(message)")
        }
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

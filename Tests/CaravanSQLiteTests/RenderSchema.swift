import Foundation
import CaravanCore
import CaravanSQLite
import Places
import Testing

@Test(.enabled(if: ProcessInfo.processInfo.environment["CARAVAN_PRINT_DDL"] != nil))
func printDDL() throws {
    for table in PlacesSchema.tables {
        for s in try SQLiteSchemaRenderer.createStatements(for: table) { Swift.print(s + ";") }
    }
}

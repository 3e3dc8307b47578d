package import CaravanCore
import Foundation

/// Frozen migrations of the TravelLog module (`Migrations/<dialect>/<id>.sql`), declared as schema changes; a
/// drift test checks that the declarations still render to the committed files. Never edit a shipped file: append.
package enum TravelLogMigrations {
    package static let all: [Migration] = [
        MigrationFiles(embedded: EmbeddedFiles.contents).migration("travel-0001-create", changes: TravelLogSchema.tables.map { .createTable($0) }),
    ]
}

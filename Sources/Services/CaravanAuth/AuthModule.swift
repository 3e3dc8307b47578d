package import CaravanCore
import Foundation

/// The auth module: its tables and frozen migrations (no policies: nothing here is reachable through REST).
package enum AuthModule {
    /// Frozen in `Sources/Services/CaravanAuth/Migrations/<dialect>/<id>.sql`. Never edit a shipped file; append new ones.
    package static let migrations: [Migration] = ["auth-0001-create"].map { MigrationFiles(embedded: EmbeddedFiles.contents).migration($0, phase: .beforeUsersRename) }
        + [MigrationFiles(embedded: EmbeddedFiles.contents).migration("auth-0002-flow-state", changes: [.createTable(AuthSchema.flowState)])]
        + [MigrationFiles(embedded: EmbeddedFiles.contents).migration("auth-0003-mfa", changes: AuthSchema.mfaTables.map { .createTable($0) })]

    package static let module = AppModule(name: "auth", tables: AuthSchema.tables, migrations: migrations)
}

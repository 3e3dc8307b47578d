public import Foundation

/// A versioned schema change of a module: declared changes (`SchemaChange`) that the adapters render, frozen as
/// committed SQL files per dialect (`Migrations/<dialect>/<id>.sql` in the module's folder). A shipped migration is
/// never edited; later changes are new migrations appended after it. The drift test renders every declared
/// migration again and compares it with its frozen file.
public struct Migration: Sendable, Hashable {
    /// A unique, ordered identifier such as `places-0001-create`.
    public let id: String
    /// What the migration declares. Empty for migrations shipped as hand-written SQL before declarations could say
    /// them (their frozen files are their only form).
    public let changes: [SchemaChange]
    /// The frozen SQL per dialect, as committed.
    public let sql: [SQLDialect: String]
    /// When the migration runs on a fresh deployment, relative to other modules' migrations.
    public let phase: MigrationPhase

    public init(id: String, changes: [SchemaChange] = [], sql: [SQLDialect: String] = [:], phase: MigrationPhase = .afterUsersRename) {
        self.id = id
        self.changes = changes
        self.sql = sql
        self.phase = phase
    }

    /// `migrations` in the order a store applies them: phase by phase, each phase in the given (module) order.
    /// Stores apply the ones not yet applied in this order, so an existing deployment and a fresh one end up alike.
    public static func applyOrder(_ migrations: [Migration]) -> [Migration] {
        MigrationPhase.allCases.flatMap { phase in migrations.filter { $0.phase == phase } }
    }

    /// The rename of the system users table (the first migration of `.afterUsersRename`).
    public static let usersRenameMigrationID = "system-0006-auth-users"

    /// Refuses a pending `.beforeUsersRename` migration whose frozen `dialect` SQL names the `users` table on a
    /// deployment where the rename already ran (its app enabled after the rename): that name no longer means
    /// Caravan's users, and may mean an app's own table.
    public static func checkApplicable(pending: [Migration], applied: Set<String>, dialect: SQLDialect) throws(CaravanError) {
        guard applied.contains(usersRenameMigrationID),
              let legacy = pending.first(where: { migration in
                  migration.phase == .beforeUsersRename && !applied.contains(migration.id)
                      && (migration.sql[dialect] ?? "").contains(#""users""#)
              }) else { return }
        throw CaravanError(.invalidConfiguration,
                           "migration \(legacy.id) predates \(usersRenameMigrationID) and cannot be applied to a deployment created after it; "
                               + "enable its app on a deployment that has it from the start")
    }
}

/// The two generations of migrations. Caravan's own users table was called `users` until `system-0006-auth-users`
/// renamed it `auth_users` (so that an app may have a `users` table of its own). The migrations shipped before
/// that name the table `users` in their frozen SQL (foreign keys to it), so on a fresh deployment they all run
/// first, then the rename (which carries their foreign keys along), then everything newer.
public enum MigrationPhase: Int, Sendable, Hashable, CaseIterable {
    /// Shipped before the rename; their frozen SQL may say `users`.
    case beforeUsersRename
    /// The rename and every later migration; they say `auth_users`.
    case afterUsersRename
}

/// A module's committed migration files, `<dialect>/<id>.sql`: compiled into the module by the `EmbedFiles` build
/// plugin (`plugins: ["EmbedFiles"]` on the target, then `MigrationFiles(embedded: EmbeddedFiles.contents)`), or read
/// from a folder (an app that ships them as a resource: `resources: [.copy("Migrations")]`, then
/// `MigrationFiles(embedded: EmbeddedFiles.contents)`).
public struct MigrationFiles: Sendable {
    private let read: @Sendable (_ dialect: SQLDialect, _ id: String) -> Data?

    /// The files of a `Migrations` folder, or none when `directory` is nil.
    public init(directory: URL?) {
        read = { dialect, id in
            guard let directory else { return nil }
            return FileManager.default.contents(atPath: directory.appendingPathComponent(dialect.rawValue).appendingPathComponent("\(id).sql").path)
        }
    }

    /// The `Migrations` folder of a resource bundle.
    public init(bundle: Bundle) {
        self.init(directory: bundle.url(forResource: "Migrations", withExtension: nil))
    }

    /// Files compiled into the module, keyed by their path inside its folder (`Migrations/<dialect>/<id>.sql`), as the
    /// `EmbedFiles` build plugin's `EmbeddedFiles.contents` holds them.
    public init(embedded files: [String: Data]) {
        read = { dialect, id in files["Migrations/\(dialect.rawValue)/\(id).sql"] }
    }

    /// Migration `id` with its declared `changes` and whatever frozen SQL there is for it. A missing file leaves that
    /// dialect out: the adapter then refuses (or, for declared changes, renders and warns).
    public func migration(_ id: String, changes: [SchemaChange] = [], phase: MigrationPhase = .afterUsersRename) -> Migration {
        var sql: [SQLDialect: String] = [:]
        for dialect in SQLDialect.allCases {
            guard let bytes = read(dialect, id) else { continue }
            sql[dialect] = String(decoding: bytes, as: UTF8.self)
        }
        return Migration(id: id, changes: changes, sql: sql, phase: phase)
    }

    /// Migration `id` taking the schema the `earlier` migrations produce to `tables` (with the declared `removals`):
    /// the changes `SchemaDiff` finds, as `caravan migrations new` wrote them into this migration's files. `tables`
    /// are the declarations as of this migration — once a later version changes them, keep these as a value. A
    /// difference the diff refuses leaves the migration without declared changes (the drift test then names it).
    public func migration(_ id: String, after earlier: [Migration], to tables: [TableSchema], removals: [SchemaRemoval] = []) -> Migration {
        let changes = (try? SchemaDiff.changes(from: SchemaModel(folding: earlier).tables, to: tables, removals: removals)) ?? []
        return migration(id, changes: changes)
    }
}

/// The engines Caravan stores data in. Each adapter renders SQL for its own; the rest of Caravan only names them.
public enum SQLDialect: String, Sendable, Hashable, CaseIterable {
    case sqlite
    case postgres
}

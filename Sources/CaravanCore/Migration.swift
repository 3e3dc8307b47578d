import Foundation

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

    public init(id: String, changes: [SchemaChange] = [], sql: [SQLDialect: String] = [:]) {
        self.id = id
        self.changes = changes
        self.sql = sql
    }
}

/// A module's committed migration files: `<directory>/<dialect>/<id>.sql`, shipped as a resource of the module's
/// target (`resources: [.copy("Migrations")]`, then `MigrationFiles(bundle: .module)`).
public struct MigrationFiles: Sendable {
    /// The `Migrations` folder, or nil when the module ships none.
    public let directory: URL?

    public init(directory: URL?) {
        self.directory = directory
    }

    /// The `Migrations` folder of a resource bundle.
    public init(bundle: Bundle) {
        self.init(directory: bundle.url(forResource: "Migrations", withExtension: nil))
    }

    /// The file of migration `id` for `dialect`.
    public func url(of id: String, dialect: SQLDialect) -> URL? {
        directory?.appendingPathComponent(dialect.rawValue).appendingPathComponent("\(id).sql")
    }

    /// Migration `id` with its declared `changes` and whatever frozen SQL the folder holds for it. A missing file
    /// leaves that dialect out: the adapter then refuses (or, for declared changes, renders and warns).
    public func migration(_ id: String, changes: [SchemaChange] = []) -> Migration {
        var sql: [SQLDialect: String] = [:]
        for dialect in SQLDialect.allCases {
            guard let path = url(of: id, dialect: dialect)?.path, let bytes = FileManager.default.contents(atPath: path) else { continue }
            sql[dialect] = String(decoding: bytes, as: UTF8.self)
        }
        return Migration(id: id, changes: changes, sql: sql)
    }
}

/// The engines Caravan stores data in. Each adapter renders SQL for its own; the rest of Caravan only names them.
public enum SQLDialect: String, Sendable, Hashable, CaseIterable {
    case sqlite
    case postgres
}

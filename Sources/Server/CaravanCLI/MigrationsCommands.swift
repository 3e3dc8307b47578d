import ArgumentParser
import CaravanCore
import CaravanPostgres
import CaravanSQL
import CaravanSQLite
import Foundation

/// `caravan migrations …`: tools for app authors.
struct MigrationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrations", abstract: "Write an app's migrations as committed SQL files: freeze the declared ones, or the next one from its declarations.",
        subcommands: [MigrationsFreeze.self, MigrationsNew.self]
    )
}

/// `caravan migrations freeze --app NAME --out DIR`: renders every declared migration of the app for each engine
/// into `DIR/<dialect>/<id>.sql`. A file that exists already must match what the declarations render (a shipped
/// migration is never edited): a drifted one is refused, not overwritten.
struct MigrationsFreeze: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "freeze", abstract: "Write the frozen SQL files of an app's declared migrations.")
    @Option(help: "The app module whose migrations to freeze.") var app: String
    @Option(help: "The module's Migrations folder (gets a sqlite/ and a postgres/ folder).") var out: String

    func run() async throws {
        guard let module = shippedApps.first(where: { $0.name == app }) else {
            throw CaravanError(.invalidConfiguration, "unknown app \(app): the apps of this binary are \(shippedApps.map(\.name).joined(separator: ", "))")
        }
        for file in try MigrationFreezer.freeze(module.migrations, into: URL(fileURLWithPath: out)) {
            writeStandardOutput("\(file.state.rawValue) \(file.path)\n")
        }
    }
}

/// `caravan migrations new --app NAME --out DIR [--name NAME]`: the next migration of the app, from what its declarations
/// say now against what its migrations produce (`MigrationGenerator`), written as `DIR/<dialect>/<id>.sql`; prints the
/// files and the declaration to append to the module's migrations. A destructive or unsupported change is refused,
/// named, and nothing is written.
struct MigrationsNew: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "new", abstract: "Write the next migration of an app from its declarations.")
    @Option(help: "The app module whose declarations changed.") var app: String
    @Option(help: "The module's Migrations folder (gets a sqlite/ and a postgres/ file).") var out: String
    @Option(help: "Ends the new migration's id (lowercase letters, digits, -), e.g. add-colour.") var name: String?

    func run() async throws {
        guard let module = shippedApps.first(where: { $0.name == app }) else {
            throw CaravanError(.invalidConfiguration, "unknown app \(app): the apps of this binary are \(shippedApps.map(\.name).joined(separator: ", "))")
        }
        let generated = try MigrationGenerator.generate(module, into: URL(fileURLWithPath: out), name: name)
        for file in generated.files { writeStandardOutput("written \(file)\n") }
        writeStandardOutput("append to the module's migrations:\n    \(generated.declaration)\n")
    }
}

/// Writes declared migrations as frozen files per dialect.
enum MigrationFreezer {
    struct FrozenFile: Equatable {
        enum State: String { case written, unchanged }
        let path: String
        let state: State
    }

    /// The SQL of `migration` for `dialect`, rendered from its declarations.
    static func render(_ migration: Migration, for dialect: SQLDialect) throws -> String {
        switch dialect {
        case .sqlite: try SQLSchema<SQLiteSyntax>.render(migration.changes)
        case .postgres: try SQLSchema<PostgresSyntax>.render(migration.changes)
        }
    }

    /// Freezes every declared migration of `migrations` (those shipped as files only are left alone) under
    /// `directory`. Throws, writing nothing more, at the first existing file that differs from its rendering.
    static func freeze(_ migrations: [Migration], into directory: URL) throws -> [FrozenFile] {
        var files: [FrozenFile] = []
        for migration in migrations where !migration.changes.isEmpty {
            for dialect in SQLDialect.allCases {
                let folder = directory.appendingPathComponent(dialect.rawValue)
                let url = folder.appendingPathComponent("\(migration.id).sql")
                let sql = try render(migration, for: dialect)
                if let existing = FileManager.default.contents(atPath: url.path) {
                    guard String(decoding: existing, as: UTF8.self) == sql else {
                        throw CaravanError(.invalidConfiguration, "\(url.path) differs from what \(migration.id)'s declarations render; "
                                           + "a shipped migration is never edited: declare the change as a new migration")
                    }
                    files.append(FrozenFile(path: url.path, state: .unchanged))
                    continue
                }
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try Data(sql.utf8).write(to: url, options: .atomic)
                files.append(FrozenFile(path: url.path, state: .written))
            }
        }
        return files
    }
}

import CaravanCore
import Foundation

/// `caravan migrations new`: the next migration of an app, from its declarations. Folds the changes its migrations
/// declare into the schema they produce (`SchemaModel`), diffs the app's tables with it (`SchemaDiff`: additive changes,
/// declared renames and removals; anything else refused, named), and writes the changes rendered for each dialect
/// (`MigrationFreezer.render`, the shared serializer) as `DIR/<dialect>/<id>.sql`.
enum MigrationGenerator {
    struct Generated: Equatable {
        let id: String
        let changes: [SchemaChange]
        let files: [String]
        /// The declaration the author appends to the module's migrations.
        let declaration: String
    }

    /// Writes the next migration of `module` under `directory`; `name` (letters, digits, `-`) ends its id.
    static func generate(_ module: AppModule, into directory: URL, name: String?) throws -> Generated {
        for migration in module.migrations where !migration.changes.isEmpty {
            for dialect in SQLDialect.allCases where migration.sql[dialect] != nil {
                guard try MigrationFreezer.render(migration, for: dialect) == migration.sql[dialect] else {
                    throw CaravanError(.invalidConfiguration, "migration \(migration.id) no longer renders to its frozen \(dialect.rawValue) file: its declared "
                                       + "changes name tables that were edited since it shipped; keep the tables it declares as they shipped (a value of "
                                       + "their own), then run this again")
                }
            }
        }
        let shipped = try SchemaModel(folding: module.migrations)
        let changes = try SchemaDiff.changes(from: shipped.tables, to: module.tables, removals: module.removals)
        guard !changes.isEmpty else {
            throw CaravanError(.invalidConfiguration, "app \(module.name): its migrations already produce its declarations; there is nothing to migrate")
        }
        let id = try nextID(after: module.migrations.last?.id, app: module.name, name: name)
        let migration = Migration(id: id, changes: changes)
        var files: [(URL, String)] = []
        for dialect in SQLDialect.allCases {
            let url = directory.appendingPathComponent(dialect.rawValue).appendingPathComponent("\(id).sql")
            guard !FileManager.default.fileExists(atPath: url.path) else {
                throw CaravanError(.invalidConfiguration, "\(url.path) exists already; a shipped migration is never edited")
            }
            files.append((url, try MigrationFreezer.render(migration, for: dialect)))
        }
        for (url, sql) in files {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(sql.utf8).write(to: url, options: .atomic)
        }
        let removals = module.removals.isEmpty ? "" : ", removals: <the module's removals>"
        let declaration = "MigrationFiles(embedded: EmbeddedFiles.contents).migration(\"\(id)\", after: <the migrations before it>, "
            + "to: <the module's tables>\(removals))"
        return Generated(id: id, changes: changes, files: files.map(\.0.path), declaration: declaration)
    }

    /// `<prefix>-<NNNN+1>[-name]` after the last migration `<prefix>-<NNNN>[-…]`, or `<app>-0001[-name]` for the first.
    static func nextID(after last: String?, app: String, name: String?) throws -> String {
        if let name, name.isEmpty || !name.unicodeScalars.allSatisfy({ CharacterSet.migrationName.contains($0) }) {
            throw CaravanError(.invalidConfiguration, "--name \(name): use lowercase letters, digits and -")
        }
        let suffix = name.map { "-" + $0 } ?? ""
        guard let last else { return app.replacingOccurrences(of: "_", with: "-") + "-0001" + suffix }
        let parts = last.split(separator: "-", omittingEmptySubsequences: false)
        guard let position = parts.firstIndex(where: { $0.count == 4 && $0.allSatisfy(\.isASCII) && Int($0) != nil }), let number = Int(parts[position]) else {
            throw CaravanError(.invalidConfiguration, "the last migration id \(last) has no four-digit number (<prefix>-NNNN-…) to follow")
        }
        let prefix = parts[..<position].joined(separator: "-")
        return prefix + "-" + String(format: "%04d", number + 1) + suffix
    }
}

extension CharacterSet {
    static let migrationName = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789-")
}

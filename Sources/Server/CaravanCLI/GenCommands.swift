import ArgumentParser
import CaravanCore
import Foundation

/// `caravan gen …`: code generated from the app modules' declarations.
struct GenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gen", abstract: "Generate client code from the app modules' declarations.", subcommands: [GenSwift.self]
    )
}

/// `caravan gen swift --apps places,travel_log [--output FILE]`: the apps' tables as `Codable` Swift records
/// (`SwiftRecordGenerator`), on standard output or into a file.
struct GenSwift: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "swift", abstract: "Write Swift records (Codable structs and table handles) of the apps' tables.")
    @Option(help: "The app modules, comma-separated (default every app of this binary).") var apps: String?
    @Option(help: "A folder to write one file per app into (<App>Records.swift; default: all apps on standard output).") var output: String?

    func run() async throws {
        let modules = try Self.modules(named: apps)
        let text = try SwiftRecordGenerator.source(for: modules)  // checks that no two tables make one Swift type
        guard let output else { return writeStandardOutput(text) }
        for module in modules {
            let file = URL(fileURLWithPath: output).appendingPathComponent(SwiftRecordGenerator.moduleTypeName(module.name) + ".swift")
            try Data(try SwiftRecordGenerator.source(for: [module]).utf8).write(to: file, options: .atomic)
            writeStandardOutput("written \(file.path)\n")
        }
    }

    /// The binary's modules named in `list` (in its order), or all of them; an unknown name is refused naming those there are.
    static func modules(named list: String?) throws(CaravanError) -> [AppModule] {
        guard let list else { return shippedApps.filter { !$0.tables.isEmpty } }
        return try list.split(separator: ",").map { name throws(CaravanError) in
            let name = name.trimmingCharacters(in: .whitespaces)
            guard let module = shippedApps.first(where: { $0.name == name }) else {
                throw CaravanError(.invalidConfiguration, "unknown app \(name): the apps of this binary are \(shippedApps.map(\.name).joined(separator: ", "))")
            }
            return module
        }
    }
}

import Foundation
import PackagePlugin

/// Compiles a target's data files into its code, so that a binary needs no resource bundle beside it: every file under
/// the target's `Migrations/` and `AdminConsole/` folders becomes an entry of the generated `EmbeddedFiles.contents`
/// (keyed by its path inside the target's folder, e.g. `Migrations/sqlite/places-0001-create.sql`). The files stay
/// ordinary files in the source tree; the build reruns the tool when one changes.
@main
struct EmbedFiles: BuildToolPlugin {
    /// The folders of a target whose files are embedded.
    static let embeddedFolders = ["Migrations", "AdminConsole"]

    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        guard let module = target as? any SourceModuleTarget else { return [] }
        let root = module.directoryURL.standardizedFileURL.path
        let inputs = module.sourceFiles.map(\.url).filter { file in
            let path = file.standardizedFileURL.path
            return Self.embeddedFolders.contains { path.hasPrefix(root + "/" + $0 + "/") }
        }.sorted { $0.path < $1.path }
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("EmbeddedFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) files of \(target.name)",
                executable: try context.tool(named: "embed-files").url,
                arguments: [output.path, root] + inputs.map(\.path),
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }
}

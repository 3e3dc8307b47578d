import Foundation
import PackagePlugin

/// Compiles a target's data files into its code, so that a binary needs no resource bundle beside it: every file under
/// the target's `Migrations/` and `AdminConsole/` folders becomes an entry of the generated `EmbeddedFiles.contents`
/// (keyed by its path inside the target's folder, e.g. `Migrations/sqlite/places-0001-create.sql`). A `Scaffold`
/// folder (excluded from the target's sources, e.g. a link to an example package) is embedded whole, but for its
/// hidden folders (`.build`). The files stay ordinary files in the source tree; the build reruns the tool when one
/// changes.
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
        } + Self.scaffoldFiles(in: module.directoryURL.appendingPathComponent("Scaffold"))
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("EmbeddedFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) files of \(target.name)",
                executable: try context.tool(named: "embed-files").url,
                arguments: [output.path, root] + inputs.map { $0.standardizedFileURL.path },
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }

    /// The files of a `Scaffold` folder (followed if it is a link), hidden folders left out; none when it is absent.
    static func scaffoldFiles(in folder: URL) -> [URL] {
        let real = folder.resolvingSymlinksInPath()
        guard let walk = FileManager.default.enumerator(at: real, includingPropertiesForKeys: [.isDirectoryKey]) else { return [] }
        var files: [URL] = []
        for case let url as URL in walk {
            let isDirectory = (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) ?? false
            if isDirectory {
                if url.lastPathComponent.hasPrefix(".") { walk.skipDescendants() }
                continue
            }
            // Keyed under the link's name, not the folder it points to.
            files.append(folder.appendingPathComponent(String(url.standardizedFileURL.path.dropFirst(real.standardizedFileURL.path.count + 1))))
        }
        return files.sorted { $0.path < $1.path }
    }
}

import ArgumentParser
import CaravanCore
import Foundation

/// `caravan new NAME`: a Swift package of your own on Caravan — an app module with one table, its owner policy and an
/// RPC function, its frozen migrations, a `caravan-<name>` binary, policy tests with the testing kit, and a README.
/// `swift run caravan-<name> serve` in it serves the new app. (`Examples/Notes` is `caravan new Notes`.)
struct NewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "new", abstract: "Create a Swift package with an app module of your own.")
    @Argument(help: "The app's name: letters and digits, starting with a letter (e.g. Tasks).") var name: String
    @Option(help: "The folder to create the package in (it gets a folder named NAME).") var path = "."
    @Option(help: "Depend on a local checkout of Caravan at this path instead of its repository.") var caravanPath: String?

    func run() async throws {
        let scaffold = try Scaffold(name: name, caravan: caravanPath.map { .path($0) } ?? .repository(Scaffold.repository, from: CaravanVersion.version))
        let folder = URL(fileURLWithPath: path).appendingPathComponent(scaffold.typeName)
        if let existing = try? FileManager.default.contentsOfDirectory(atPath: folder.path), !existing.isEmpty {
            throw CaravanError(.invalidConfiguration, "\(folder.path) exists and is not empty; choose another NAME or --path")
        }
        for (file, text) in scaffold.files().sorted(by: { $0.key < $1.key }) {
            let url = folder.appendingPathComponent(file)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url, options: .withoutOverwriting)
        }
        writeStandardOutput("created \(folder.path)\n  cd \(folder.path)\n  swift run \(scaffold.binaryName) serve --data-dir ./\(scaffold.appName)-data\n  swift test\n")
    }
}

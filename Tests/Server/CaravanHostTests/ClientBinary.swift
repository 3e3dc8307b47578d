import CaravanCore
import CaravanHost
import CaravanTesting
import Foundation

/// The real `caravan-client` built next to this test bundle, run as a process of its own on a store (the second
/// process of a shared store, a client killed at a crash point).
struct ClientBinary: Sendable {
    let url: URL

    init() throws {
        url = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("caravan-client")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw CaravanError(.internalFailure, "caravan-client not found at \(url.path); run swift build first")
        }
    }

    func run(_ serving: CaravanHost.Serving, _ store: String, _ arguments: [String], crashAt: String? = nil) async throws -> ChildProcess.Outcome {
        try await run(url: serving.baseURL, key: serving.anonKey, store, arguments, crashAt: crashAt)
    }

    /// Runs the client on `store` against `url` (through `env`, which sets `CARAVAN_CLIENT_CRASH_AT` for this run alone).
    func run(url server: String, key: String, _ store: String, _ arguments: [String], crashAt: String? = nil) async throws -> ChildProcess.Outcome {
        var command = ["CARAVAN_CLIENT_CRASH_AT=\(crashAt ?? "")", url.path]
        command.append(contentsOf: arguments.prefix(1))  // the subcommand, then its options
        command.append(contentsOf: ["--url", server, "--apikey", key, "--store", store])
        command.append(contentsOf: arguments.dropFirst())
        return try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), command)
    }
}

import CaravanCore
import Foundation

/// `scripts/postgres-cluster`, for tests that start clusters of their own (a server to stop and start, a standby).
package enum PostgresClusterScript {
    /// Runs `scripts/postgres-cluster ARGUMENTS` on the cluster in `state` (`CARAVAN_PG_STATE`) without blocking a
    /// cooperative thread; returns its standard output.
    package static func run(_ arguments: [String], state: String) async throws -> String {
        try await runScript("postgres-cluster", arguments, environment: ["CARAVAN_PG_STATE": state])
    }
}

/// `scripts/pgbouncer`: Debian's PgBouncer in transaction mode on a free loopback port, in front of a test cluster.
package enum PgBouncerScript {
    /// Whether PgBouncer is installed (`apt-get install -y pgbouncer`; CI installs it).
    package static var isInstalled: Bool {
        ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].contains { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts a pooler of every database on `127.0.0.1:targetPort` with `poolSize` server connections per database and
    /// user, its files in `state` (`CARAVAN_PGBOUNCER_STATE`); returns the port it listens on.
    package static func start(targetPort: Int, poolSize: Int, state: String) async throws -> Int {
        let output = try await runScript("pgbouncer", ["start", String(targetPort), String(poolSize)], environment: ["CARAVAN_PGBOUNCER_STATE": state])
        guard let port = Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw CaravanError(.internalFailure, "scripts/pgbouncer printed no port", internalDetail: output)
        }
        return port
    }

    /// Stops the pooler started in `state` and deletes its files.
    package static func stop(state: String) async throws {
        _ = try await runScript("pgbouncer", ["stop"], environment: ["CARAVAN_PGBOUNCER_STATE": state])
    }
}

/// Runs `scripts/NAME ARGUMENTS` with `environment` added, without blocking a cooperative thread; returns its standard
/// output, or throws with it when the script fails.
private func runScript(_ name: String, _ arguments: [String], environment: [String: String]) async throws -> String {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/" + name).path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = [script] + arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe()
    process.standardOutput = output
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do { try process.run() } catch { continuation.resume(throwing: error) }
    }
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    guard status == 0 else {
        throw CaravanError(.internalFailure, "scripts/\(name) \(arguments.first ?? "") failed", internalDetail: text)
    }
    return text
}

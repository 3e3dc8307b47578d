import CaravanCore
import Foundation

/// `scripts/postgres-cluster`, for tests that start clusters of their own (a server to stop and start, a standby).
package enum PostgresClusterScript {
    /// Runs `scripts/postgres-cluster ARGUMENTS` on the cluster in `state` (`CARAVAN_PG_STATE`) without blocking a
    /// cooperative thread; returns its standard output.
    package static func run(_ arguments: [String], state: String) async throws -> String {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/postgres-cluster").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["CARAVAN_PG_STATE": state]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard status == 0 else {
            throw CaravanError(.internalFailure, "scripts/postgres-cluster \(arguments.first ?? "") failed", internalDetail: text)
        }
        return text
    }
}

import CaravanCore
package import Foundation

/// PostgreSQL's own `pg_dump` and `pg_restore`, run as child processes for a deployment's database. The password
/// travels in the child's environment (`PGPASSWORD`), never on its command line.
package struct PostgresDumpTool: Sendable {
    /// The directory holding `pg_dump` and `pg_restore`.
    package let directory: String

    /// Finds the tools on `PATH`, else in Debian's `/usr/lib/postgresql/<version>/bin` (the newest version); nil
    /// when there are none.
    package static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) -> PostgresDumpTool? {
        var candidates = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        candidates += versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "/usr/lib/postgresql/\($0)/bin" }
        for directory in candidates where !directory.isEmpty {
            let tools = ["pg_dump", "pg_restore"].map { (directory as NSString).appendingPathComponent($0) }
            if tools.allSatisfy({ FileManager.default.isExecutableFile(atPath: $0) }) { return PostgresDumpTool(directory: directory) }
        }
        return nil
    }

    /// Dumps the database in custom format to `path`, as of the exported `snapshot` (see
    /// `PostgresStore.withExportedSnapshot`; its transaction must stay open while this runs).
    package func dump(_ configuration: PostgresStoreConfiguration, snapshot: String, to path: String) async throws {
        try await run("pg_dump", ["--format=custom", "--no-owner", "--no-privileges", "--snapshot=\(snapshot)", "--file=\(path)"],
                      configuration)
    }

    /// Restores a custom-format dump into the (empty) database, in one transaction, stopping at the first error.
    package func restore(_ configuration: PostgresStoreConfiguration, from path: String) async throws {
        try await run("pg_restore", ["--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction", path], configuration)
    }

    private func run(_ tool: String, _ arguments: [String], _ configuration: PostgresStoreConfiguration) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: (directory as NSString).appendingPathComponent(tool))
        // libpq's host and port lists: the tool keeps the first server that qualifies, as the store does.
        process.arguments = arguments + ["--host=\(configuration.endpoints.map(\.host).joined(separator: ","))",
                                         "--port=\(configuration.endpoints.map { String($0.port) }.joined(separator: ","))",
                                         "--username=\(configuration.username)", "--dbname=\(configuration.database)"]
        var environment = ProcessInfo.processInfo.environment
        environment["PGPASSWORD"] = configuration.password
        environment["PGSSLMODE"] = configuration.tlsMode.rawValue
        environment["PGCONNECT_TIMEOUT"] = "10"
        environment["PGTARGETSESSIONATTRS"] = configuration.targetSessionAttributes.rawValue
        process.environment = environment
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("caravan-\(tool)-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: errors.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errors) }
        process.standardError = try FileHandle(forWritingTo: errors)
        process.standardOutput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: CaravanError(.internalFailure, "\(tool) could not be started", internalDetail: "\(error)"))
            }
        }
        guard status == 0 else {
            let output = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw CaravanError(.internalFailure, "\(tool) failed (exit \(status)): \(output.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }
}

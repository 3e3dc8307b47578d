import ArgumentParser
import CaravanCore
import CaravanHost
import CaravanDeployment
import CaravanServer
import Foundation

/// `caravan backup --out FILE`: a consistent backup of the deployment while it serves.
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Back the deployment up into one file while it serves, with each table's rows and checksum.",
        discussion: """
        SQLite: a copy by SQLite's online backup API plus the signing secret. PostgreSQL: pg_dump in custom format \
        of an exported snapshot (pg_dump must be installed). The checksums are those of the state copied, as \
        `caravan copy` prints them; `caravan restore` checks them. The file (mode 0600) holds password hashes and \
        the signing secret: keep it as safe as the data directory.
        """
    )

    @OptionGroup var data: DataOptions
    @Option(help: "The backup file to write (must not exist).") var out: String
    @Flag(help: "Print the manifest (tables, rows, checksums) as JSON.") var json = false

    func run() async throws {
        let configuration = try data.resolve()
        let logger = makeLogger(level: "warning")
        let out = self.out
        let manifest = try await withDeployment(configuration, logger: logger) { deployment in
            try await DeploymentBackup(deployment: deployment, catalog: try deploymentCatalog(configuration), now: epochSeconds)
                .run(to: out, progress: progressBar())
        }
        writeStandardOutput(json ? manifest.json.jsonText + "\n" : "backup written to \(out) (\(manifest.payload.rawValue))\n" + manifest.text)
    }
}

/// `caravan restore FILE`: a backup into an empty deployment, verified.
struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore a backup into an empty deployment (a new sync epoch), then verify every table against the backup.",
        discussion: """
        A SQLite backup restores into a data directory (--data-dir) or a PostgreSQL database (--database); a pg_dump \
        backup into a PostgreSQL database with no tables. Exits non-zero, naming the table, when one differs.
        """
    )

    @OptionGroup var data: DataOptions
    @Argument(help: "The backup file (from caravan backup).") var file: String
    @Flag(help: "Print the report as JSON.") var json = false

    func run() async throws {
        let configuration = try data.resolve()
        let logger = makeLogger(level: "warning")
        guard FileManager.default.isReadableFile(atPath: file) else {
            throw ValidationError("cannot read \(file)")
        }
        let location = try DeploymentLocation.resolve(dataDirectory: configuration.dataDirectory, databaseURL: configuration.databaseURL,
                                                    poolSize: configuration.databasePool.size, acquireTimeout: configuration.databasePool.acquireTimeout,
                                                    preparedStatements: configuration.databasePool.preparedStatements)
        let report = try await DeploymentRestore(catalog: try deploymentCatalog(configuration), logger: logger, now: epochSeconds)
            .run(file: file, into: location, progress: progressBar())
        writeStandardOutput(json ? report.json.jsonText + "\n" : report.text)
        if let mismatch = report.mismatches.first {
            throw DeploymentError(.checksumMismatch, "table \(mismatch.name) differs after the restore: \(mismatch.sourceRows) rows in the backup, \(mismatch.targetRows) restored")
        }
    }
}

/// A one-line progress bar on standard error when it is a terminal (nothing otherwise).
package struct ProgressBar: Sendable {
    let isShown = isatty(STDERR_FILENO) == 1

    package init() {}

    /// Draws `label [####.....] status` for `done` of `total` (a newline once done), when shown.
    package func draw(_ label: String = "", done: Int, total: Int, status: String? = nil) {
        guard isShown else { return }
        let width = 30
        let filled = total <= 0 ? width : min(width, done * width / total)
        let prefix = label.isEmpty ? "" : label + " "
        writeStandardError("\r\(prefix)[\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] \(status ?? "\(done)/\(total)")")
        if done >= total { writeStandardError("\n") }
    }
}

/// The backup and restore progress on a `ProgressBar`.
func progressBar() -> @Sendable (BackupProgress) -> Void {
    let bar = ProgressBar()
    return { progress in bar.draw(progress.phase.padding(toLength: 10, withPad: " ", startingAt: 0), done: progress.done, total: progress.total) }
}

import ArgumentParser
import CaravanAuth
import CaravanCore
import CaravanDeployment
import CaravanServer
import Foundation

/// `caravan copy`: moves a SQLite deployment (a data directory) into a PostgreSQL database.
struct Copy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a SQLite deployment into an empty PostgreSQL database, then verify every table.",
        discussion: """
        Applies the migrations on the target, copies every table (users with their password hashes, auth tables, app \
        tables, the change log with its seq values, the signing secret) in one transaction, then compares each table's \
        row count and checksum on both sides; then the stored objects' bytes (the source's storage/ folder) become \
        rows of the target, compared too. Exits non-zero, naming the table, when one differs.
        """
    )

    @Option(help: "The source data directory (holding caravan.sqlite).") var from: String
    @Option(help: "The target: a postgres:// URL.") var to: String
    @Flag(help: "Replace the target's rows when it is not empty.") var force = false
    @Flag(help: "Print the report as JSON.") var json = false
    @Option(name: .customLong("batch-size"), help: "Rows read and written per statement (default 1000).") var batchSize = 1000

    func run() async throws {
        let logger = makeLogger(level: "warning")
        guard FileManager.default.fileExists(atPath: (from as NSString).appendingPathComponent("caravan.sqlite")) else {
            throw DeploymentError(.sourceMissing, "\(from) holds no caravan.sqlite: not a Caravan data directory")
        }
        guard case .database(let target) = try DeploymentLocation.resolve(dataDirectory: from, databaseURL: to) else {
            throw DeploymentError(.unsupportedEngine, "--to must be a postgres:// URL")
        }
        let catalog = try deploymentCatalog(try ServerConfiguration.resolve(flags: [:], environment: ProcessInfo.processInfo.environment, file: [:]))
        let migrations = catalog.migrations
        let (force, batchSize, from) = (self.force, self.batchSize, self.from)
        let report = try await Deployment.withOpened(.directory(from), migrations: migrations, logger: logger) { source in
            try await Deployment.withOpened(.database(target), migrations: migrations, logger: logger, creating: true) { destination in
                guard let bulk = destination.store as? any BulkLoadingStore else {
                    throw DeploymentError(.unsupportedEngine, "the target store cannot bulk-load")
                }
                let copier = DeploymentCopier(source: source.store, sourceSecret: try SigningSecret.existing(in: from), target: bulk,
                                              catalog: catalog, batchSize: batchSize)
                return try await copier.run(force: force, objectFilesIn: from, catalog: catalog)
            }
        }
        writeStandardOutput(json ? report.json.jsonText + "\n" : report.text)
        if let mismatch = report.mismatches.first {
            throw DeploymentError(.checksumMismatch, "table \(mismatch.name) differs after the copy: \(mismatch.sourceRows) rows → \(mismatch.targetRows), checksum \(mismatch.sourceChecksum) → \(mismatch.targetChecksum)")
        }
    }
}

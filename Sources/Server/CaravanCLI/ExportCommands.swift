import ArgumentParser
import CaravanAuth
import CaravanCore
import CaravanHost
import CaravanDeployment
import CaravanServer
import Foundation

/// `caravan export …`: personal data out of the deployment.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "export", abstract: "Export data out of the deployment.",
                                                    subcommands: [ExportUser.self])
}

/// `caravan export user ID_OR_EMAIL --format json|csv [--out FILE]`: everything the deployment holds about a user.
struct ExportUser: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Export a user's profile and every row of every table that belongs to them (the tables' owner declarations).",
        discussion: """
        JSON: {"user_id", "user": profile, "tables": {table: [rows]}, "storage_objects": [files]} on standard output \
        or in --out. CSV: a ZIP archive (--out required) with user.csv, one <table>.csv per owned table and \
        storage_objects.csv. Each stored file comes with a signed URL (a path on the server) valid for one hour. No \
        password hash, no session or token; other users appear only as the ids the rows hold.
        """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable { case json, csv }

    @OptionGroup var data: DataOptions
    @Argument(help: "User id or email.") var user: String
    @Option(help: "json (default) or csv.") var format: Format = .json
    @Option(help: "The file to write (required for csv; must not exist).") var out: String?

    func validate() throws {
        if format == .csv, out == nil { throw ValidationError("--format csv writes a ZIP archive: give --out FILE") }
    }

    func run() async throws {
        let user = self.user
        let configuration = try data.resolve()
        let logger = makeLogger(level: "warning")
        let export = try await withDeployment(configuration, logger: logger) { deployment in
            let secret = try await deployment.signingSecret(now: epochSeconds())
            let verifier = await TokenVerifier(secret: secret, now: epochSeconds)
            let catalog = try deploymentCatalog(configuration)
            let pipeline = WritePipeline(store: deployment.store, publisher: ChangePublisher())
            let auth = try await makeAuthService(configuration: configuration, store: deployment.store, catalog: catalog, pipeline: pipeline,
                                                 secret: secret, verifier: verifier, logger: logger)
            let id = try await auth.resolveUser(.serviceRole, idOrEmail: user)
            let storage = makeStorageService(deployment: deployment, pipeline: pipeline, catalog: catalog, verifier: verifier,
                                             configuration: configuration, logger: logger)
            return try await UserExport.read(id, access: catalog.access(for: .serviceRole), store: deployment.store, files: storage)
        }
        guard export.userExists else { throw AuthError(.userNotFound, "no user \(user)") }
        switch (format, out) {
        case (.csv, let out?):
            try UserExportArchive.write(export, to: out)
            writeStandardOutput("\(export.tables.reduce(0) { $0 + $1.result.rows.count }) rows of \(export.tables.count) tables written to \(out)\n")
        case (_, let out?):
            guard !FileManager.default.fileExists(atPath: out) else { throw DeploymentError(.outputExists, "\(out) already exists; choose another name") }
            guard FileManager.default.createFile(atPath: out, contents: Data((export.json.jsonText + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
                throw DeploymentError(.outputUnwritable, "\(out) could not be created; check that its folder exists and is writable")
            }
        case (_, nil):
            writeStandardOutput(export.json.jsonText + "\n")
        }
    }
}

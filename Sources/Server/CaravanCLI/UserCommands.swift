import ArgumentParser
import CaravanAuth
import CaravanCore
import CaravanHost
import CaravanDeployment
import CaravanServer
import Foundation
import Logging

/// `caravan user …`: manage users in a data directory without a running server (as the service role).
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Create, list and delete users, and set their app role (app_metadata.role).",
        subcommands: [UserCreate.self, UserList.self, UserDelete.self, UserSetRole.self]
    )
}

/// Lends the auth service over the deployment's store to `body`, for one CLI command; the store closes after it.
func withAuth<T: Sendable>(_ data: DataOptions, _ body: (AuthService) async throws -> T) async throws -> T {
    try await withAuthAndDeployment(data) { auth, _ in try await body(auth) }
}

/// `withAuth`, lending the open deployment too.
func withAuthAndDeployment<T: Sendable>(_ data: DataOptions, _ body: (AuthService, Deployment) async throws -> T) async throws -> T {
    let configuration = try data.resolve()
    let logger = makeLogger(level: "warning")
    return try await withDeployment(configuration, logger: logger) { deployment in
        let secret = try await deployment.signingSecret(now: epochSeconds())
        let verifier = await TokenVerifier(secret: secret, now: epochSeconds)
        let pipeline = WritePipeline(store: deployment.store, publisher: ChangePublisher())
        let auth = try await makeAuthService(configuration: configuration, store: deployment.store, catalog: try deploymentCatalog(configuration), pipeline: pipeline,
                                             secret: secret, verifier: verifier, logger: logger)
        return try await body(auth, deployment)
    }
}

struct UserCreate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a confirmed user; prints it as JSON.")
    @OptionGroup var data: DataOptions
    @Option(help: "Email address.") var email: String?
    @Option(help: "Phone number (E.164).") var phone: String?
    @Option(help: "Password (visible to other local users in the process list; prefer --password-stdin).") var password: String?
    @Flag(name: .customLong("password-stdin"), help: "Read the password from the first line of standard input.") var passwordFromStdin = false
    @Option(help: "App role stored in app_metadata.role (e.g. admin).") var role: String?

    func validate() throws {
        if password == nil, !passwordFromStdin {
            throw ValidationError("a user needs a password to sign in: give --password-stdin (or --password)")
        }
    }

    func run() async throws {
        let given = passwordFromStdin ? readLine(strippingNewline: true) : password
        guard let secret = given, !secret.isEmpty else {
            throw CaravanError(.invalidConfiguration, "no password on standard input", hint: "pipe the password to --password-stdin")
        }
        let app: JSONValue? = role.map { .object([("role", .string($0))]) }
        let newUser = NewUser(email: email, phone: phone, password: secret, appMetadata: app, emailConfirmed: true, phoneConfirmed: true)
        let user = try await withAuth(data) { auth in try await auth.adminCreateUser(.serviceRole, newUser) }
        writeStandardOutput(user.json.jsonText + "\n")
    }
}

struct UserList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List users: id, email, phone, app role, created_at.")
    @OptionGroup var data: DataOptions
    @Flag(help: "Print one JSON user object per line.") var json = false

    func run() async throws {
        let json = self.json
        try await withAuth(data) { auth in
            var page = 1
            while true {
                let users = try await auth.adminListUsers(.serviceRole, page: page, perPage: 500)
                for user in users {
                    if json {
                        writeStandardOutput(user.json.jsonText + "\n")
                    } else {
                        let columns = [user.id, user.email ?? "-", user.phone ?? "-", user.appRole ?? "-", user.createdAt]
                        writeStandardOutput(columns.joined(separator: "\t") + "\n")
                    }
                }
                if users.count < 500 { break }
                page += 1
            }
        }
    }
}

struct UserDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a user (by id or email) and everything that cascades from it.")
    @OptionGroup var data: DataOptions
    @Argument(help: "User id or email.") var user: String

    func run() async throws {
        let user = self.user
        let id = try await withAuth(data) { auth in
            let id = try await auth.resolveUser(.serviceRole, idOrEmail: user)
            try await auth.adminDeleteUser(.serviceRole, id: id)
            return id
        }
        writeStandardOutput("deleted \(id)\n")
    }
}

struct UserSetRole: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "set-role", abstract: "Set (or with --clear remove) a user's app role, app_metadata.role.")
    @OptionGroup var data: DataOptions
    @Argument(help: "User id or email.") var user: String
    @Argument(help: "The role, e.g. admin.") var role: String?
    @Flag(help: "Remove the role.") var clear = false

    func validate() throws {
        if clear == (role != nil) { throw ValidationError("give a role or --clear, not both") }
    }

    func run() async throws {
        let user = self.user
        let value: JSONValue = role.map(JSONValue.string) ?? .null
        let updated = try await withAuth(data) { auth in
            let id = try await auth.resolveUser(.serviceRole, idOrEmail: user)
            return try await auth.adminUpdateUser(.serviceRole, id: id, changes: UserChanges(appMetadata: .object([("role", value)])))
        }
        writeStandardOutput("\(updated.id)\t\(updated.appRole ?? "-")\n")
    }
}

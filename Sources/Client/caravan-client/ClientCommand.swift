import ArgumentParser
import CaravanClient
import CaravanCore
import Foundation
import GroupDecisions
import LanguageExchange
import Places
import TravelLog

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Exit codes: 0 ok, 1 other failure, 2 usage, 3 offline (server unreachable: local work kept), 4 auth.
enum ExitStatus: Int32 {
    case ok = 0, failure = 1, usage = 2, offline = 3, auth = 4
}

/// `caravan-client`: the Caravan client SDK from the command line (for users, scripts and tests).
@main
struct CaravanClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "caravan-client",
        abstract: "An offline-first Caravan client: a local store, an outbox and sync, over HTTP.",
        discussion: "Exit codes: 0 ok, 2 usage, 3 offline (the server is unreachable; local work is kept), 4 auth.",
        subcommands: [SignUp.self, SignIn.self, SignOut.self, Insert.self, Update.self, Delete.self, Sync.self, Rows.self, OutboxCommand.self, Watch.self, Fetch.self, Call.self,
                      Attach.self, AttachmentCommand.self, AttachmentsCommand.self, BenchLive.self, BenchInsert.self]
    )

    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as ClientError {
            FileHandle.standardError.write(Data("caravan-client: \(error.message)\(error.code.map { " (\($0))" } ?? "")\n".utf8))
            switch error.kind {
            case .offline, .transient: terminate(.offline)
            case .unauthorized: terminate(.auth)
            default: terminate(.failure)
            }
        } catch {
            let code = exitCode(for: error)
            if code == .success || code.rawValue == 0 {
                exit(withError: error)
            }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            terminate(code == .validationFailure || code.rawValue == 64 ? .usage : .failure)
        }
    }
}

/// Ends the process with `status`.
func terminate(_ status: ExitStatus) -> Never {
    #if canImport(Glibc)
    Glibc.exit(status.rawValue)
    #else
    Darwin.exit(status.rawValue)
    #endif
}

/// Where the client talks to and keeps its data (`CARAVAN_CLIENT_URL`, `CARAVAN_CLIENT_APIKEY`, `CARAVAN_CLIENT_STORE`).
struct ClientOptions: ParsableArguments {
    @Option(help: "The server's base URL (env CARAVAN_CLIENT_URL; default http://127.0.0.1:8080).") var url: String?
    @Option(help: "The anon API key (env CARAVAN_CLIENT_APIKEY).") var apikey: String?
    @Option(help: "The local store file (env CARAVAN_CLIENT_STORE; default ./caravan-client.sqlite).") var store: String?

    func context() throws -> ClientContext {
        let environment = ProcessInfo.processInfo.environment
        let url = self.url ?? environment["CARAVAN_CLIENT_URL"] ?? "http://127.0.0.1:8080"
        guard let apikey = self.apikey ?? environment["CARAVAN_CLIENT_APIKEY"], !apikey.isEmpty else {
            throw ValidationError("--apikey (or CARAVAN_CLIENT_APIKEY) is required")
        }
        let path = self.store ?? environment["CARAVAN_CLIENT_STORE"] ?? "./caravan-client.sqlite"
        let modules = [PlacesModule.module, TravelLogModule.module, GroupDecisionsModule.module, LanguageExchangeModule.module]
        let caches = modules.flatMap(\.clientCaches)
        // The synced tables, and the tables read on demand and kept for a time (LangMatcher's profiles).
        let kept = Set(caches.compactMap { rule -> String? in if case .timeToLive(let table, _) = rule { table } else { nil } })
        let tables = modules.flatMap(\.tables).filter { $0.isSynced || kept.contains($0.name) }
        let store = try LocalStore(path: path, tables: tables, caches: caches)
        let transport = AsyncHTTPClientTransport()
        let api = CaravanAPI(baseURL: url, apiKey: apikey, transport: transport)
        return ClientContext(store: store, api: api, transport: transport)
    }
}

struct ClientContext {
    let store: LocalStore
    let api: CaravanAPI
    let transport: AsyncHTTPClientTransport

    var session: SessionManager { SessionManager(store: store, api: api, now: { nowMicroseconds() / 1_000_000 }) }

    func close() async {
        try? await transport.shutdown()
    }
}

/// The device's clock: the system's, moved by `CARAVAN_CLIENT_CLOCK_SKEW` seconds (signed) when set, so tests can run
/// clients whose clocks disagree (outbox times, token expiry).
func nowMicroseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) + clockSkewMicroseconds }

let clockSkewMicroseconds: Int64 = ProcessInfo.processInfo.environment["CARAVAN_CLIENT_CLOCK_SKEW"].flatMap { Int64($0) }.map { $0 * 1_000_000 } ?? 0
func nowText() -> String { Timestamp.format(microseconds: nowMicroseconds()) }

func printJSON(_ value: JSONValue) {
    FileHandle.standardOutput.write(Data((value.jsonText + "\n").utf8))
}

func parseJSON(_ text: String, _ name: String) throws -> JSONValue {
    do {
        return try JSONParser.parse(text)
    } catch {
        throw ValidationError("\(name) is not valid JSON")
    }
}

/// `CARAVAN_CLIENT_CRASH_AT=<point>`: the process kills itself (SIGKILL) at that point, for the crash tests.
enum CrashPoint: String {
    case beforeOutboxCommit = "before-outbox-commit"
    case afterOutboxCommit = "after-outbox-commit"
    case duringPush = "during-push"
    case duringPull = "during-pull"
    /// After the server answered an attachment upload, before the answer is recorded.
    case duringUpload = "during-upload"

    static var configured: CrashPoint? { ProcessInfo.processInfo.environment["CARAVAN_CLIENT_CRASH_AT"].flatMap(CrashPoint.init) }

    static func hook(_ point: CrashPoint) -> (@Sendable () -> Void)? {
        guard configured == point else { return nil }
        return { kill(getpid(), SIGKILL) }
    }
}

import ArgumentParser
import CaravanClient
import CaravanCore
import Foundation

struct Fetch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read one row by key: the local copy while its table's time-to-live holds it fresh, else from the server (kept).")
    @OptionGroup var options: ClientOptions
    @Argument var table: String
    @Argument(help: "The primary key as a JSON object.") var key: String

    func run() async throws {
        let key = try parseJSON(key, "the key")
        try await runEngine(options) { engine in try await engine.cachedRow(table, key: key) }
    }
}

struct Call: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Call an RPC function; with --cache, answer from (and keep the result in) that key-value cache.")
    @OptionGroup var options: ClientOptions
    @Argument var function: String
    @Argument(help: "The arguments as a JSON object.") var arguments = "{}"
    @Option(help: "A key-value cache of the store (translations).") var cache: String?

    func run() async throws {
        let arguments = try parseJSON(arguments, "the arguments")
        try await runEngine(options) { engine in
            if let cache { return try await engine.cachedCall(function, arguments: arguments, cache: cache) }
            let value = try await engine.withFreshToken { token in try await engine.api.rpc(function, arguments: arguments, token: token) }
            return CachedRead(value: value, fromCache: false, stale: false)
        }
    }
}

/// Opens the store and a sync engine, runs `body`, closes, and prints its read as `{"value":…,"from_cache":…,"stale":…}`.
func runEngine(_ options: ClientOptions, _ body: (SyncEngine) async throws -> CachedRead) async throws {
    let context = try options.context()
    let engine = SyncEngine(store: context.store, api: context.api, session: context.session, now: nowMicroseconds)
    let result: Result<CachedRead, any Error>
    do { result = .success(try await body(engine)) } catch { result = .failure(error) }
    await context.close()
    printJSON(try result.get().json)
}

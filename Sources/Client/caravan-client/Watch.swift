import ArgumentParser
import CaravanClient
import CaravanCore
import Foundation
import Logging

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow realtime for the tables: apply each live change to the local store and print it, one JSON line (until interrupted)."
    )
    @OptionGroup var options: ClientOptions
    @Argument(help: "Tables, comma-separated.") var tables: String

    func run() async throws {
        let context = try options.context()
        let scope = tables.split(separator: ",").map(String.init)
        var logger = Logger(label: "caravan-client")
        logger.logLevel = .warning
        let engine = SyncEngine(store: context.store, api: context.api, session: context.session, now: nowMicroseconds)
        let realtime = RealtimeClient(store: context.store, engine: engine, session: context.session, logger: logger)
        let result: Result<Void, any Error>
        do {
            result = .success(try await realtime.run(tables: scope) { change in printJSON(change.json) })
        } catch {
            result = .failure(error)
        }
        await context.close()
        try result.get()
    }
}

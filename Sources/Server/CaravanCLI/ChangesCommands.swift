import ArgumentParser
import CaravanCore
import CaravanHost
import CaravanDeployment
import CaravanServer
import CaravanSync
import Logging

/// `caravan changes …`: the change log that feeds sync and realtime.
struct ChangesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "changes", abstract: "Inspect and compact the change log.",
                                                    subcommands: [CompactChanges.self])
}

/// `caravan changes compact --older-than 7d`: what the server's compaction service does every interval, by hand.
struct CompactChanges: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Remove change-log entries and sync push verdicts committed before now minus --older-than; sync cursors from before them must pull a new snapshot."
    )

    @OptionGroup var data: DataOptions
    @Option(name: .customLong("older-than"), help: "Age to keep: 30s, 15m, 12h or 7d (default: changes_retention, 7d).") var olderThan: String?
    @Flag(help: "Print {\"removed_changes\": …, \"removed_verdicts\": …, \"compacted_through\": …}.") var json = false

    func run() async throws {
        let configuration = try data.resolve()
        var retention = configuration.changeLogRetention
        if let olderThan {
            guard let window = ChangeLogRetention.parseDuration(olderThan) else {
                throw ValidationError("--older-than must be a duration such as 30s, 15m, 12h or 7d")
            }
            retention.window = window
        }
        let logger = makeLogger(level: "warning")
        let result = try await withDeployment(configuration, logger: logger) { deployment in
            try await ChangeLogCompactor(store: deployment.store, retention: retention, clock: ContinuousClock(), now: epochMicroseconds, logger: logger)
                .compactOnce()
        }
        if json {
            writeStandardOutput(JSONValue.object([
                ("removed_changes", .integer(Int64(result.removedChanges))), ("removed_verdicts", .integer(Int64(result.removedVerdicts))),
                ("compacted_through", .integer(result.compactedThrough)),
            ]).jsonText + "\n")
        } else {
            writeStandardOutput("\(result.removedChanges) change-log entries and \(result.removedVerdicts) push verdicts removed; compacted through seq \(result.compactedThrough)\n")
        }
    }
}

import ArgumentParser
import CaravanCLI
import CaravanCore
import CaravanDeployment
import Foundation
import GroupDecisions
import PlacesCommands

/// `caravan decisions …`: the GroupDecisions app's commands.
struct DecisionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "decisions", abstract: "Group decisions (Fork in the Road).",
                                                    subcommands: [TallyDecision.self])
}

/// `caravan decisions tally`: reads `{"candidates":[ids],"ballots":[[ids]…]}` on stdin and prints the
/// instant-runoff tally (`{"winner","rounds","weights"}`), with the code `submit_vote` and `finalize_decision` use.
struct TallyDecision: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tally", abstract: "Tally ranked ballots (instant-runoff) from stdin JSON.")

    func run() async throws {
        let input = FileHandle.standardInput.readDataToEndOfFile()
        do {
            writeStandardOutput(try TallyDocument.run(input: Array(input)) + "\n")
        } catch {
            throw ValidationError(error.details.map { "\(error.message) (\($0))" } ?? error.message)
        }
    }
}

/// `caravan import restaurants FILE`: the restaurants, fast-food places and cafés of a places.json file into the
/// GroupDecisions `restaurants` table (upsert by `google_place_id`; see `RestaurantImporter` for the mapping).
struct ImportRestaurants: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "restaurants", abstract: "Import the restaurants of a places.json file (GroupDecisions).")
    @OptionGroup var data: DataOptions
    @Argument(help: "The places.json file.") var file: String
    @Flag(help: "Print the summary as JSON.") var json = false

    func run() async throws {
        let configuration = try data.resolve()
        let entries = try PlacesFile.entries(at: file)
        let summary = try await withDeployment(configuration, logger: makeLogger(level: "warning")) { deployment in
            let pipeline = WritePipeline(store: deployment.store, publisher: ChangePublisher())
            let access = Catalog(modules: [SystemModule.module, GroupDecisionsModule.module]).access(for: .serviceRole)
            return try await RestaurantImporter(pipeline: pipeline, access: access).run(entries)
        }
        if json {
            let rejections = summary.rejections.map {
                JSONValue.object([("index", .integer(Int64($0.index))), ("field", .string($0.field)), ("reason", .string($0.reason))])
            }
            writeStandardOutput(JSONValue.object([
                ("total", .integer(Int64(summary.total))), ("skipped", .integer(Int64(summary.skipped))),
                ("inserted", .integer(Int64(summary.inserted))), ("updated", .integer(Int64(summary.updated))),
                ("by_kind", .object(summary.byKind.keys.sorted().map { ($0, JSONValue.integer(Int64(summary.byKind[$0] ?? 0))) })),
                ("rejections", .array(rejections)),
            ]).jsonText + "\n")
        } else {
            for rejection in summary.rejections { writeStandardOutput("rejected row \(rejection.index): \(rejection.field): \(rejection.reason)\n") }
            let kinds = summary.byKind.keys.sorted().map { "\($0) \(summary.byKind[$0] ?? 0)" }.joined(separator: ", ")
            writeStandardOutput("\(summary.total) places: \(summary.inserted) restaurants inserted, \(summary.updated) updated (\(kinds)), "
                                + "\(summary.skipped) other places skipped, \(summary.rejections.count) rejected\n")
        }
    }
}

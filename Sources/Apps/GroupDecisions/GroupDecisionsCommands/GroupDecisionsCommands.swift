package import CaravanCLI

/// The group-decisions app's commands in a `caravan` binary: `caravan decisions tally` and `caravan import restaurants`.
package enum GroupDecisionsCommands {
    package static let commands = AppCommands(top: [DecisionsCommand.self], imports: [ImportRestaurants.self])
}

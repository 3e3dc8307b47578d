public import CaravanCLI

/// The group-decisions app's commands in a `caravan` binary: `caravan decisions tally` and `caravan import restaurants`.
public enum GroupDecisionsCommands {
    public static let commands = AppCommands(top: [DecisionsCommand.self], imports: [ImportRestaurants.self])
}

import ArgumentParser

/// `caravan bench …`: scale data and in-process timings for BENCHMARKS.md.
struct Bench: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(abstract: "Generate scale data and time searches in-process.", subcommands: CaravanCommandLine.commands.benches)
    }
}


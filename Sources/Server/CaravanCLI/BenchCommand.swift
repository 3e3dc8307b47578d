import ArgumentParser

/// `caravan bench …`: scale data and in-process timings for BENCHMARKS.md.
struct Bench: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(abstract: "Generate scale data, time searches in-process, drive a running server's realtime.", subcommands: [RealtimeBench.self] + CaravanCommandLine.commands.benches)
    }
}


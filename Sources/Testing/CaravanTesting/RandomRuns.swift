import Foundation

/// How many random runs a model-based test makes: seeds `first ..< first + count` of `steps` steps each, from
/// `CARAVAN_MOVES_FIRST_SEED`, `CARAVAN_MOVES_SEEDS` and `CARAVAN_MOVES_STEPS` (`scripts/moves-seeds` sets them), else the
/// suite's fixed budget.
package struct RandomRuns: Sendable {
    package let seeds: Range<UInt64>
    package let steps: Int

    package static func fromEnvironment(seeds defaultSeeds: UInt64 = 2, steps defaultSteps: Int = 25) -> RandomRuns {
        let environment = ProcessInfo.processInfo.environment
        let first = environment["CARAVAN_MOVES_FIRST_SEED"].flatMap(UInt64.init) ?? 0
        let count = environment["CARAVAN_MOVES_SEEDS"].flatMap(UInt64.init) ?? defaultSeeds
        return RandomRuns(seeds: first..<first + count, steps: environment["CARAVAN_MOVES_STEPS"].flatMap(Int.init) ?? defaultSteps)
    }
}

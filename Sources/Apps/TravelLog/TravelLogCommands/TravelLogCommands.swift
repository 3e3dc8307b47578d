package import CaravanCLI

/// The travel-log app's commands in a `caravan` binary: `caravan import world` and `caravan bench travel-search`.
package enum TravelLogCommands {
    package static let commands = AppCommands(imports: [ImportWorld.self], benches: [BenchTravelSearch.self])
}

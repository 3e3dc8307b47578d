package import CaravanCLI

/// The places app's commands in a `caravan` binary: `caravan import places`, `caravan bench generate-places` and
/// `caravan bench search`.
package enum PlacesCommands {
    package static let commands = AppCommands(imports: [ImportPlaces.self], benches: [GeneratePlaces.self, BenchSearch.self])
}

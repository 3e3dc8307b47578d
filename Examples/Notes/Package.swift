// swift-tools-version: 6.1
// A Caravan deployment with an app of your own. Build and run it from this folder:
//   swift run caravan-notes serve --data-dir ./notes-data
import PackageDescription

let package = Package(
    name: "Notes",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Your own package would name Caravan's repository here with `from:` a release.
        .package(name: "Caravan", path: "../.."),
    ],
    targets: [
        // Migrations/<dialect>/<id>.sql: the frozen migrations, written by `caravan-notes migrations freeze`.
        .target(name: "Notes", dependencies: [.product(name: "CaravanCore", package: "Caravan")], resources: [.copy("Migrations")]),
        .executableTarget(name: "caravan-notes", dependencies: ["Notes", .product(name: "CaravanCLI", package: "Caravan")]),
        // `swift test`: the module's policies and RPC on both engines, with Caravan's testing kit.
        .testTarget(name: "NotesTests", dependencies: ["Notes", .product(name: "CaravanTesting", package: "Caravan")]),
    ]
)

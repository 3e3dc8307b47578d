// swift-tools-version: 6.1
// A Caravan deployment with an app of your own. Build and run it from this folder:
//   swift run caravan-notes serve --data-dir ./notes-data
import PackageDescription

let package = Package(
    name: "Notes",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Caravan", path: "../.."),
    ],
    targets: [
        // Migrations/<dialect>/<id>.sql: the frozen migrations, written by `caravan-notes migrations freeze` and compiled
        // into the module by Caravan's EmbedFiles build plugin (the binary needs no resource folder beside it).
        .target(name: "Notes", dependencies: [.product(name: "CaravanCore", package: "Caravan")],
                plugins: [.plugin(name: "EmbedFiles", package: "Caravan")]),
        .executableTarget(name: "caravan-notes", dependencies: ["Notes", .product(name: "CaravanCLI", package: "Caravan")]),
        // `swift test`: the module's policies and RPC on both engines, with Caravan's testing kit.
        .testTarget(name: "NotesTests", dependencies: ["Notes", .product(name: "CaravanTesting", package: "Caravan")]),
    ]
)

// swift-tools-version: 6.1
// The view models of an offline-first places app on Caravan's client SDK, with SwiftUI views on Apple platforms.
// From this folder: `swift build`, `swift test` (the tests run a Caravan server in-process).
import PackageDescription

let package = Package(
    name: "PlacesKit",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [.library(name: "PlacesKit", targets: ["PlacesKit"])],
    dependencies: [
        .package(name: "Caravan", path: "../.."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(name: "PlacesKit", dependencies: [
            .product(name: "CaravanClient", package: "Caravan"),
            // The app module's table declarations, shared with the server (no server code runs on the device).
            .product(name: "CaravanCore", package: "Caravan"), .product(name: "Places", package: "Caravan"),
        ]),
        .testTarget(name: "PlacesKitTests", dependencies: [
            "PlacesKit", .product(name: "CaravanHost", package: "Caravan"), .product(name: "Places", package: "Caravan"),
            .product(name: "CaravanClient", package: "Caravan"), .product(name: "CaravanCore", package: "Caravan"),
            .product(name: "Logging", package: "swift-log"),
        ]),
    ]
)

// swift-tools-version: 6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Caravan",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "caravan", targets: ["caravan"]),
        .executable(name: "caravan-client", targets: ["caravan-client"]),
        // An app module's vocabulary: schema, policies, RPC functions, the write pipeline, errors.
        .library(name: "CaravanCore", targets: ["CaravanCore"]),
        // The whole server in-process, serving an embedder's app modules (`CaravanHost`, a service of its `ServiceGroup`).
        .library(name: "CaravanHost", targets: ["CaravanHost"]),
        // The `caravan` command line run with an embedder's own app modules (`CaravanCommandLine.main(apps:)`).
        .library(name: "CaravanCLI", targets: ["CaravanCLI"]),
        // The client SDK: local store, outbox, sync engine, realtime client; the shipped apps' generated records.
        .library(name: "CaravanClient", targets: ["CaravanClient", "CaravanClientModels"]),
        // The places app's declarations, for client apps that mirror its tables (Examples/PlacesKit).
        .library(name: "Places", targets: ["Places"]),
        // Test support for app modules.
        .library(name: "CaravanTesting", targets: ["CaravanTesting"]),
        // Compiles an app module's `Migrations/` folder into its code (`MigrationFiles(embedded: EmbeddedFiles.contents)`),
        // so that its binary is one file.
        .plugin(name: "EmbedFiles", targets: ["EmbedFiles"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // `swift package generate-documentation` (scripts/docs): the DocC catalogs and the Snippets/ they show.
        .package(url: "https://github.com/apple/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "CaravanCore",
            dependencies: [.product(name: "CoreMetrics", package: "swift-metrics")],
            path: "Sources/Core/CaravanCore",
            swiftSettings: swiftSettings,
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "CaravanSQL",
            dependencies: ["CaravanCore"],
            path: "Sources/Engines/CaravanSQL",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CaravanSQLite",
            dependencies: [
                "CaravanCore",
                "CaravanSQL",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/Engines/CaravanSQLite",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CaravanPostgres",
            dependencies: [
                "CaravanCore",
                "CaravanSQL",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            path: "Sources/Engines/CaravanPostgres",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Places",
            dependencies: ["CaravanCore"],
            path: "Sources/Apps/Places/Places",
            swiftSettings: swiftSettings,
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "GroupDecisions",
            dependencies: ["CaravanCore"],
            path: "Sources/Apps/GroupDecisions/GroupDecisions",
            swiftSettings: swiftSettings,
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "LanguageExchange",
            dependencies: ["CaravanCore", .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio")],
            path: "Sources/Apps/LanguageExchange/LanguageExchange",
            swiftSettings: swiftSettings,
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "TravelLog",
            dependencies: ["CaravanCore"],
            path: "Sources/Apps/TravelLog/TravelLog",
            swiftSettings: swiftSettings,
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "Transit",
            dependencies: [
                "CaravanCore",
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            path: "Sources/Apps/Transit/Transit",
            swiftSettings: swiftSettings
        ),
        // The transit bundle: one read-only SQLite file built from a GTFS feed, and its queries.
        .target(
            name: "TransitSQLite",
            dependencies: [
                "CaravanCore",
                "CaravanSQLite",
                "Transit",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/Engines/TransitSQLite",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CaravanAuth",
            dependencies: [
                "CaravanCore",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/Services/CaravanAuth",
            swiftSettings: swiftSettings,
            plugins: ["EmbedFiles"]
        ),
        // libvips loaded at run time (dlopen), for storage's image transformations: linked by nothing, so the server
        // builds and runs without it.
        .target(
            name: "CImageVips",
            path: "Sources/Services/CImageVips"
        ),
        // Test support: libvips loaded before the test process's `main` (see the file); linked by test targets only.
        .target(
            name: "CImageVipsTestPreload",
            dependencies: ["CImageVips"],
            path: "Sources/Testing/CImageVipsTestPreload"
        ),
        // Supabase Storage: bucket and object metadata as declared tables, bytes behind `ObjectByteStore`.
        .target(
            name: "CaravanStorage",
            dependencies: [
                "CaravanCore",
                "CImageVips",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Services/CaravanStorage",
            swiftSettings: swiftSettings,
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "CaravanSync",
            dependencies: [
                "CaravanCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/Services/CaravanSync",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CaravanRealtime",
            dependencies: [
                "CaravanCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/Services/CaravanRealtime",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CaravanClientSQLite",
            // Filters are rendered by the shared serializer with the SQLite engine's spelling (one grammar, one SQL).
            dependencies: ["CaravanCore", "CaravanSQL", "CaravanSQLite", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Sources/Client/CaravanClientSQLite",
            swiftSettings: swiftSettings
        ),
        // The shipped apps' tables as Swift records, generated by `caravan gen swift` (CaravanCLITests checks them).
        .target(
            name: "CaravanClientModels",
            dependencies: ["CaravanCore"],
            path: "Sources/Client/CaravanClientModels",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CaravanClient",
            dependencies: [
                "CaravanCore",
                "CaravanClientSQLite",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // MD5 of attachments: the storage etag an upload is settled by.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Sources/Client/CaravanClient",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "caravan-client",
            dependencies: [
                "CaravanClient",
                "CaravanClientModels",
                "CaravanCore",
                "Places",
                "TravelLog",
                "GroupDecisions",
                "LanguageExchange",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Client/caravan-client",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CaravanServer",
            dependencies: [
                "CaravanCore",
                "CaravanAuth",
                "CaravanSync",
                "CaravanRealtime",
                "CaravanStorage",
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The admin console's static files (HTML, CSS, ES modules), served at /admin, compiled in (EmbedFiles).
            path: "Sources/Server/CaravanServer",
            swiftSettings: swiftSettings,
            plugins: ["EmbedFiles"]
        ),
        .target(
            name: "CaravanDeployment",
            dependencies: [
                "CaravanCore",
                "CaravanAuth",
                "CaravanStorage",
                "CaravanSQLite",
                "CaravanPostgres",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            path: "Sources/Server/CaravanDeployment",
            swiftSettings: swiftSettings
        ),
        // The testing kit: both engines (fresh stores, template databases), an app module's fixture, the policy-matrix
        // runner, a manual clock, query fuzzing.
        .target(
            name: "CaravanTesting",
            dependencies: ["CaravanCore", "CaravanSQL", "CaravanSQLite", "CaravanPostgres", "CaravanSync", .product(name: "Crypto", package: "swift-crypto")],
            path: "Sources/Testing/CaravanTesting",
            swiftSettings: swiftSettings
        ),
        // The composition root: builds and runs the whole server from a configuration and app modules.
        .target(
            name: "CaravanHost",
            dependencies: [
                "CaravanCore",
                "CaravanAuth",
                "CaravanDeployment",
                "CaravanPostgres",
                "CaravanRealtime",
                "CaravanServer",
                "CaravanStorage",
                "CaravanSync",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/Server/CaravanHost",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CaravanCLI",
            dependencies: [
                "CaravanHost",
                "CaravanPostgres",
                "CaravanCore",
                "CaravanAuth",
                "CaravanSQLite",
                "CaravanServer",
                "CaravanRealtime",
                "CaravanDeployment",
                "CaravanSync",
                "CaravanStorage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                "CaravanSQL",
                .product(name: "NIOCore", package: "swift-nio"),
                // `caravan bench realtime`: the load harness's writers and subscribers.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            path: "Sources/Server/CaravanCLI",
            // Scaffold links to Examples/Notes: `caravan new` writes it renamed, compiled in (EmbedFiles), not compiled.
            exclude: ["Scaffold"],
            swiftSettings: swiftSettings,
            plugins: ["EmbedFiles"]
        ),
        // Each app's commands (importers, benchmarks, its own subcommands), beside the app; the `caravan` binary
        // gathers them.
        .target(
            name: "PlacesCommands",
            dependencies: ["CaravanCLI", "CaravanCore", "CaravanDeployment", "CaravanSQLite", "Places",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/Apps/Places/PlacesCommands",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TravelLogCommands",
            dependencies: ["CaravanCLI", "CaravanCore", "CaravanDeployment", "TravelLog",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/Apps/TravelLog/TravelLogCommands",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LanguageExchangeCommands",
            dependencies: ["CaravanCLI", "CaravanCore", "CaravanDeployment", "LanguageExchange",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/Apps/LanguageExchange/LanguageExchangeCommands",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TransitCommands",
            dependencies: ["CaravanCLI", "CaravanCore", "Transit", "TransitSQLite",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/Apps/Transit/TransitCommands",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GroupDecisionsCommands",
            dependencies: ["CaravanCLI", "CaravanCore", "CaravanDeployment", "GroupDecisions", "PlacesCommands",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/Apps/GroupDecisions/GroupDecisionsCommands",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "caravan",
            dependencies: [
                "CaravanCLI",
                "Places",
                "TravelLog",
                "GroupDecisions",
                "PlacesCommands",
                "TravelLogCommands",
                "GroupDecisionsCommands",
                "TransitCommands",
                "LanguageExchange",
                "LanguageExchangeCommands",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/Server/caravan",
            swiftSettings: swiftSettings
        ),
        // Examples/Notes: an app module of your own on Caravan (its own Package.swift builds the same sources against
        // this package; these targets let the test command build and smoke-test it).
        .target(
            name: "Notes",
            dependencies: ["CaravanCore"],
            path: "Examples/Notes/Sources/Notes",
            swiftSettings: swiftSettings,
            plugins: ["EmbedFiles"]
        ),
        // Examples/PlacesKit: the view models of a places app on the client SDK (its own Package.swift builds it alone;
        // here it is built and tested with the rest).
        .target(
            name: "PlacesKit",
            dependencies: ["CaravanClient", "CaravanClientModels", "CaravanCore", "Places"],
            path: "Examples/PlacesKit/Sources/PlacesKit",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PlacesKitTests",
            dependencies: ["PlacesKit", "CaravanClient", "CaravanClientModels", "CaravanCore", "CaravanHost", "Places",
                           .product(name: "Logging", package: "swift-log"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            path: "Examples/PlacesKit/Tests/PlacesKitTests",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "caravan-notes",
            dependencies: ["CaravanCLI", "Notes"],
            path: "Examples/Notes/Sources/caravan-notes",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaravanCoreTests",
            dependencies: ["CaravanCore", "CaravanTesting"],
            path: "Tests/Core/CaravanCoreTests",
            // The public surface, read by PublicSurfaceTests.
            exclude: ["PublicSurface.txt"],
            swiftSettings: swiftSettings
        ),
        // The storage port's conformance suite: every adapter (SQLite, PostgreSQL) runs the same reads against an
        // in-memory oracle, writes, constraint codes, policies and declared search.
        .testTarget(
            name: "StoreConformanceTests",
            dependencies: ["CaravanCore", "CaravanSQL", "CaravanSQLite", "CaravanPostgres", "CaravanTesting", "Places",
                           .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/Engines/StoreConformanceTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaravanSQLiteTests",
            dependencies: ["CaravanCore", "CaravanSQL", "CaravanAuth", "CaravanSQLite", "CaravanTesting", "Places",
                           .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/Engines/CaravanSQLiteTests",
            swiftSettings: swiftSettings
        ),
        // The serializer's SQL for both dialects, and every shipped module's frozen migrations against its declarations.
        .testTarget(
            name: "CaravanSQLTests",
            dependencies: ["CaravanCore", "CaravanSQL", "CaravanSQLite", "CaravanPostgres", "CaravanAuth", "CaravanStorage", "Places",
                           "TravelLog", "GroupDecisions", "LanguageExchange"],
            path: "Tests/Engines/CaravanSQLTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PlacesTests",
            dependencies: ["CaravanCore", "CaravanSQLite", "CaravanTesting", "Places"],
            path: "Tests/Apps/PlacesTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TravelLogTests",
            dependencies: ["CaravanCore", "CaravanTesting", "TravelLog"],
            path: "Tests/Apps/TravelLogTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaravanPostgresTests",
            dependencies: [
                "CaravanCore", "CaravanPostgres", "CaravanTesting", "CaravanSQL", "CaravanSQLite", "CaravanAuth", "Places",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/Engines/CaravanPostgresTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaravanServerTests",
            dependencies: [
                "CaravanCore", "CaravanAuth", "CaravanSQLite", "CaravanServer", "CaravanDeployment", "CaravanPostgres", "CaravanRealtime", "Places", "LanguageExchange", "CaravanTesting",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/Server/CaravanServerTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaravanStorageTests",
            dependencies: [
                "CaravanCore", "CaravanStorage", "CaravanTesting", "CImageVipsTestPreload", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Services/CaravanStorageTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaravanRealtimeTests",
            dependencies: ["CaravanCore", "CaravanRealtime", "CaravanTesting", "Places", "GroupDecisions", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Services/CaravanRealtimeTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaravanAuthTests",
            dependencies: [
                "CaravanCore", "CaravanSQL", "CaravanAuth", "CaravanSQLite", "CaravanTesting", "Places",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/Services/CaravanAuthTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaravanSyncTests",
            dependencies: ["CaravanCore", "CaravanSync", "CaravanTesting", "Places", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Services/CaravanSyncTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaravanClientTests",
            // CaravanHost: the sync status tests run a real server in-process.
            dependencies: ["CaravanClient", "CaravanClientModels", "CaravanCore", "Places", "LanguageExchange", "TravelLog", "GroupDecisions",
                           "CaravanHost", "CaravanTesting", .product(name: "Logging", package: "swift-log"),
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"), .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/Client/CaravanClientTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LanguageExchangeTests",
            dependencies: [
                "CaravanCore", "CaravanSQLite", "CaravanPostgres", "CaravanTesting", "CaravanSync", "LanguageExchange", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/Apps/LanguageExchangeTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GroupDecisionsTests",
            dependencies: [
                "CaravanCore", "CaravanTesting", "CaravanSync", "GroupDecisions", "CaravanHost",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Apps/GroupDecisionsTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TransitTests",
            dependencies: ["CaravanCore", "Transit", "TransitSQLite", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/Apps/TransitTests",
            swiftSettings: swiftSettings
        ),
        // Examples/Notes tests its own module with the testing kit, as an app author would.
        .testTarget(
            name: "NotesTests",
            dependencies: ["CaravanCore", "CaravanTesting", "Notes"],
            path: "Examples/Notes/Tests/NotesTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaravanHostTests",
            // `caravan-client`: SharedStoreProcessTests runs it as the second process on a store; the attachment
            // crash test kills it mid-upload.
            dependencies: ["CaravanCore", "CaravanHost", "CaravanServer", "CaravanRealtime", "CaravanClient", "CaravanClientModels", "CaravanTesting", "CaravanPostgres", "Notes", "Places", "TravelLog",
                           "GroupDecisions", "LanguageExchange", "caravan-client",
                           .product(name: "Logging", package: "swift-log"),
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            path: "Tests/Server/CaravanHostTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CaravanCLITests",
            dependencies: ["CaravanCore", "CaravanSQL", "CaravanSQLite", "CaravanPostgres", "CaravanCLI", "caravan", "caravan-notes", "Places", "TravelLog", "GroupDecisions",
                           "LanguageExchange", "CaravanTesting", "CaravanHost", .product(name: "Logging", package: "swift-log"), .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            path: "Tests/Server/CaravanCLITests",
            // The golden files of `caravan migrations new` (MigrationsNewTests).
            exclude: ["MigrationsNew"],
            swiftSettings: swiftSettings
        ),
        // Compiles each target's Migrations/ and AdminConsole/ files into its code (no resource bundle beside the binary).
        .plugin(name: "EmbedFiles", capability: .buildTool(), dependencies: ["embed-files"], path: "Plugins/EmbedFiles"),
        .executableTarget(name: "embed-files", path: "Plugins/EmbedFilesTool"),
    ]
)

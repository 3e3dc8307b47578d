import CaravanClient
import CaravanClientModels
import CaravanCore
import CaravanHost
import Foundation
import Logging
import Places
import PlacesKit
import ServiceLifecycle
import Testing

/// The places app's view models on Linux, against a real server in-process: the list fills from the first sync and
/// follows the category; a favorite toggled offline shows at once and waits ("Offline — 1 change waiting"); back
/// online it goes up and the line says "Up to date"; a favorite the server refuses leaves the list and is named.
@MainActor
@Suite("PlacesKit view models", .timeLimit(.minutes(2)))
struct PlacesKitTests {
    let logger = Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() }

    @Test func listFavoritesAndSyncLineThroughAnOfflineOnlineCycle() async throws {
        let transport = AsyncHTTPClientTransport()
        do {
            try await offlineOnlineCycle(transport)
        } catch {
            try await transport.shutdown()
            throw error
        }
        try await transport.shutdown()
    }

    func offlineOnlineCycle(_ transport: AsyncHTTPClientTransport) async throws {
        let directory = NSTemporaryDirectory() + "placeskit-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        var port = 0
        var client: PlacesClient!
        var list: PlaceListModel!
        var favorites: FavoritesModel!
        var badge: SyncBadgeModel!

        try await withServer(port: 0, directory: directory + "/data") { serving in
            port = serving.port
            for (id, category, rating) in [("qahwa", "cafe", "4.5"), ("najd", "cafe", "4.8"), ("kabsa", "restaurant", "4.1")] {
                let created = try await transport.send(TransportRequest(
                    method: "POST", url: serving.baseURL + "/rest/v1/places", headers: Self.service(serving),
                    body: Array(#"{"id":"\#(id)","name_ar":"\#(id)","category":"\#(category)","category_ar":"-","google_rating":\#(rating)}"#.utf8)))
                #expect(created.status == 201)
            }
            client = try PlacesClient(directory: directory, serverURL: serving.baseURL, apiKey: serving.anonKey, transport: transport)
            try await client.sessions.signUp(.email("layla@example.com"), password: "a long secret")
            list = PlaceListModel(client: client, category: "cafe")
            favorites = try FavoritesModel(client: client)
            badge = SyncBadgeModel(client: client)
            try await eventually("the first read") { list.isLoaded }
            #expect(list.places.isEmpty && badge.text == "Not synced yet")

            await client.syncNow()
            try await eventually("the synced cafés, best rated first") { list.places.map(\.id) == ["najd", "qahwa"] }
            #expect(badge.text == "Up to date")
            list.category = "restaurant"
            try await eventually("the category followed") { list.places.map(\.id) == ["kabsa"] }
            list.category = "cafe"
            try await eventually("back to cafés") { list.places.count == 2 }
        }

        // Offline: the favorite is in the list at once; the background sync fails and says it waits.
        let qahwa = try #require(list.places.first { $0.id == "qahwa" })
        try await favorites.toggle(qahwa)
        try await eventually("read-your-writes offline") { favorites.isFavorite(qahwa) }
        try await eventually("the sync line says it waits: \(badge.text)") { badge.text == "Offline — 1 change waiting" }

        // Online again: it goes up; a favorite of a place the server does not have is refused and leaves the list.
        try await withServer(port: port, directory: directory + "/data") { serving in
            await client.syncNow()
            try await eventually("up to date: \(badge.text)") { badge.text == "Up to date" }
            let stored = try await transport.send(TransportRequest(method: "GET", url: serving.baseURL + "/rest/v1/favorites?select=place_id",
                                                                   headers: Self.service(serving), body: []))
            #expect(String(decoding: stored.body, as: UTF8.self) == #"[{"place_id":"qahwa"}]"#)

            try await favorites.toggle(Place(id: "closed-down", nameAr: "-", category: "cafe", categoryAr: "-"))
            try await eventually("the refusal is named") { favorites.lastRefusal != nil }
            #expect(favorites.lastRefusal?.code == "23503", "\(String(describing: favorites.lastRefusal))")
            try await eventually("the refused favorite left the list") { favorites.favorites.map(\.placeID) == ["qahwa"] }
            await client.syncNow()
            #expect(badge.text == "1 change refused")
        }
    }

    static func service(_ serving: CaravanHost.Serving) -> [(String, String)] {
        [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)"), ("Content-Type", "application/json")]
    }

    /// Waits (polling the main actor) until `condition` holds; fails after 10 seconds.
    func eventually(_ what: @autoclosure () -> String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("never came: \(what())")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func withServer(port: Int, directory: String, _ body: (CaravanHost.Serving) async throws -> Void) async throws {
        let host = try CaravanHost(configuration: .init(settings: ["port": "\(port)", "data_dir": directory]), apps: [PlacesModule.module], logger: logger)
        let group = ServiceGroup(configuration: .init(services: [host], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                try await body(try await host.serving())
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}

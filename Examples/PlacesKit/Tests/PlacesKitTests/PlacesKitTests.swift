import CaravanClient
import CaravanClientModels
import CaravanCore
import CaravanHost
import Foundation
import Logging
import Places
import PlacesKit
import Testing

/// The places app's view models on Linux, against a real server in-process: the list fills from the first sync and
/// follows the category; a favorite toggled offline shows at once and waits ("Offline — 1 change waiting"); back
/// online it goes up and the line says "Up to date"; a favorite the server refuses leaves the list and is named.
@MainActor
@Suite("PlacesKit view models", .timeLimit(.minutes(5)))
struct PlacesKitTests {
    let logger = Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() }

    @Test func listFavoritesAndSyncLineThroughAnOfflineOnlineCycle() async throws {
        try await AsyncHTTPClientTransport.using { try await offlineOnlineCycle($0) }
    }

    func offlineOnlineCycle(_ transport: AsyncHTTPClientTransport) async throws {
        let directory = NSTemporaryDirectory() + "placeskit-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        var port = 0
        var client: PlacesClient!
        var list: PlaceListModel!
        var favorites: FavoritesModel!
        var badge: SyncBadgeModel!
        var photo: FavoritePhotoModel!

        try await CaravanHost.withServing(["port": "0", "data_dir": directory + "/data"], apps: [PlacesModule.module], logger: logger) { serving in
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
        try await CaravanHost.withServing(["port": "\(port)", "data_dir": directory + "/data"], apps: [PlacesModule.module], logger: logger) { serving in
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

            // A favorite with a photo: queued together, uploaded once, then shown from the device with the server gone.
            let najd = try #require(list.places.first { $0.id == "najd" })
            try await favorites.toggle(najd, photo: Self.photo)
            try await eventually("the favorite with its photo") { favorites.isFavorite(najd) }
            await client.syncNow()
            let kept = try #require(favorites.favorites.first { $0.placeID == "najd" })
            let uploaded = try await transport.send(TransportRequest(
                method: "GET", url: serving.baseURL + "/storage/v1/object/public/place-photos/" + FavoritePhotoModel.path(of: kept), headers: [], body: []))
            #expect(uploaded.status == 200 && uploaded.body == Array(Self.photo), "the photo is on the server")
            photo = FavoritePhotoModel(client: client, favorite: kept)
        }
        await photo.load()
        #expect(photo.photo == Self.photo, "offline, the photo comes from the device: \(String(describing: photo.error))")
    }

    static let photo = Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x5A, count: 1_000) + [0xFF, 0xD9])

    static func service(_ serving: CaravanHost.Serving) -> [(String, String)] {
        [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)"), ("Content-Type", "application/json")]
    }

    /// Waits (polling the main actor) until `condition` holds; fails after 60 seconds (the whole suite loads the machine).
    func eventually(_ what: @autoclosure () -> String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("never came: \(what())")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

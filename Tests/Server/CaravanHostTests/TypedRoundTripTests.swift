import CaravanClient
import CaravanClientModels
import CaravanCore
import CaravanHost
import CaravanTesting
import Foundation
import GroupDecisions
import LanguageExchange
import Logging
import Places
import ServiceLifecycle
import Testing
import TravelLog

/// Generated records through the whole path: struct → local store → push → server → pull on another device →
/// struct, equal; and the same struct read from a REST response.
@Suite struct TypedRoundTripTests {
    let logger = Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() }
    static let modules = [PlacesModule.module, TravelLogModule.module, GroupDecisionsModule.module, LanguageExchangeModule.module]

    @Test(arguments: Engine.allCases)
    func recordsRoundTripThroughTheServer(engine: Engine) async throws {
        var settings = ["port": "0", "data_dir": temporaryDirectory()]
        if engine == .postgres { settings["database_url"] = try await Engine.makeEmptyPostgresDatabase() }
        let host = try CaravanHost(configuration: .init(settings: settings), apps: Self.modules, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [host], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let serving = try await host.serving()
            let transport = AsyncHTTPClientTransport()
            let api = CaravanAPI(baseURL: serving.baseURL, apiKey: serving.anonKey, transport: transport)
            // An admin may write places (`app_metadata.role`, set through the admin API with the service key).
            let created = try await transport.send(TransportRequest(
                method: "POST", url: serving.baseURL + "/auth/v1/admin/users",
                headers: [("apikey", serving.serviceRoleKey), ("Authorization", "Bearer \(serving.serviceRoleKey)"), ("Content-Type", "application/json")],
                body: Array(#"{"email":"admin@example.com","password":"correct horse battery","email_confirm":true,"app_metadata":{"role":"admin"}}"#.utf8)))
            #expect(created.status == 200 || created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            let tables = PlacesModule.module.tables.filter(\.isSynced)
            let phone = try Device(api: api, tables: tables), laptop = try Device(api: api, tables: tables)
            _ = try await phone.session.signIn(email: "admin@example.com", password: "correct horse battery")
            _ = try await laptop.session.signIn(email: "admin@example.com", password: "correct horse battery")
            let userID = try #require(try phone.store.session()?.userID)
            let me = try #require(UUID(uuidString: userID))

            let at = Date(timeIntervalSince1970: 1_795_000_000.123456)
            let place = Place(id: "typed-kudu", nameAr: "كودو", nameEn: "Kudu", category: "cafe", categoryAr: "مقهى", neighborhood: "Olaya",
                              googleRating: Decimal(string: "4.5"), ratingCount: 120, priceRange: "$$", latitude: Decimal(string: "24.7136"),
                              longitude: Decimal(string: "46.6753"), hours: .object([("fri", .string("closed")), ("sat", .array([.integer(8), .integer(23)]))]),
                              tags: ["coffee", "wifi"], features: .object([("parking", .bool(true))]), isTrending: true, isNew: false,
                              isFree: false, isVerified: true, isActive: true, createdAt: at, completenessScore: Decimal(string: "0.75"))
            let favorite = Favorite(id: UUID(), userID: me, placeID: place.id, note: "dates", createdAt: at)
            // Its created_at and updated_at left to their defaults: taken on the phone at the write, kept by the server.
            let review = Review(id: UUID(), userID: me, placeID: place.id, rating: 5, textAr: "ممتاز", visitDate: "2026-11-20",
                                photos: ["a.jpg"], isVerified: false, helpfulCount: 0)
            let storedPlace = try await phone.store.insert(place)
            try await phone.store.insert(favorite)
            let storedReview = try await phone.store.insert(review)
            #expect(storedReview.createdAt != nil && storedReview.updatedAt != nil)
            let pushed = try await phone.engine.sync(tables: ["places", "favorites", "reviews"])
            let parked = try phone.store.outbox().filter { $0.state == .parked }.map(\.json)
            #expect(pushed.rejected == 0, "\(parked)")

            _ = try await laptop.engine.sync(tables: ["places", "favorites", "reviews"])
            let pulledPlace = try #require(try await laptop.store.fetch(Place.self, where: .column(Place.CodingKeys.id, .eq, place.id)).first)
            var expectedPlace = storedPlace
            expectedPlace.completenessScore = pulledPlace.completenessScore  // derived by the server from the other columns
            #expect(pulledPlace.completenessScore != place.completenessScore, "the derived column is the server's")
            #expect(pulledPlace == expectedPlace)
            #expect(try await laptop.store.fetch(Favorite.self) == [favorite])
            #expect(try await laptop.store.fetch(Review.self) == [storedReview])

            // The same struct decodes the REST response.
            let token = try await laptop.session.accessToken()
            let rest = try #require(try await api.fetchRow("places", key: [("id", .string(place.id))], token: token))
            #expect(try Place(row: rest) == pulledPlace)

            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            try await transport.shutdown()
        }
    }
}

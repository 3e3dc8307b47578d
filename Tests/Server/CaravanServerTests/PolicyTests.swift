import CaravanAuth
import CaravanCore
import CaravanTesting
import CaravanServer
import CaravanSQLite
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Places
import Testing

/// Who makes a request in the policy tests.
enum Actor: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case anon, userA, userB, admin, service
    var testDescription: String { rawValue }
}

/// A deployment with two users, an admin and rows of every places table, served through the real router.
struct PolicyDeployment {
    static let userA = "aaaaaaaa-0000-4000-8000-00000000000a"
    static let userB = "bbbbbbbb-0000-4000-8000-00000000000b"
    static let adminUser = "cccccccc-0000-4000-8000-00000000000c"
    static let favoriteA = "fa000000-0000-4000-8000-00000000000a"
    static let favoriteB = "fb000000-0000-4000-8000-00000000000b"
    static let reviewA = "ea000000-0000-4000-8000-00000000000a"

    var deployment: TestDeployment
    let tokens: [Actor: String]
    let publisher: ChangePublisher

    static func make(engine: Engine = .sqlite) async throws -> PolicyDeployment {
        let publisher = ChangePublisher()
        let deployment = try await TestDeployment.make(engine: engine, publisher: publisher)
        let store = deployment.services.store
        let service = deployment.services.catalog.access(for: .serviceRole)
        _ = try await store.transaction(service, rollback: false, grant: TransactionGrant()) { tx in
            let users = SystemModule.users
            _ = try await tx.insert([userA, userB, adminUser].map { RowValues(["id": .text($0)]) }, into: users, conflict: nil)
            _ = try await tx.insert([
                RowValues(["id": .text("closed-cafe"), "name_ar": .text("مغلق"), "category": .text("cafe"), "category_ar": .text("كافيه"), "is_active": .bool(false)]),
            ], into: PlacesSchema.places, conflict: nil)
            _ = try await tx.insert([
                RowValues(["id": .text(favoriteA), "user_id": .text(userA), "place_id": .text("cafe-nour")]),
                RowValues(["id": .text(favoriteB), "user_id": .text(userB), "place_id": .text("kudu")]),
            ], into: PlacesSchema.favorites, conflict: nil)
            _ = try await tx.insert([RowValues(["id": .text(reviewA), "user_id": .text(userA), "place_id": .text("cafe-nour"), "rating": .integer(4)])],
                              into: PlacesSchema.reviews, conflict: nil)
            _ = try await tx.insert([RowValues(["place_id": .text("cafe-nour"), "app_name": .text("Jahez")])], into: PlacesSchema.deliveryPrices, conflict: nil)
            _ = try await tx.insert([RowValues(["place_id": .text("kudu"), "item_name_ar": .text("برجر"), "price": .double(25)])], into: PlacesSchema.menuPrices, conflict: nil)
            _ = try await tx.insert([RowValues(["id": .text("cafe"), "name_ar": .text("مقاهي"), "name_en": .text("Cafes")])], into: PlacesSchema.categories, conflict: nil)
            return 0
        }
        let verifier = deployment.services.verifier
        func token(_ sub: String, admin: Bool = false) async throws -> String {
            try await verifier.issueToken(claims: .object([
                ("sub", .string(sub)), ("role", .string("authenticated")), ("aud", .string("authenticated")),
                ("exp", .integer(4_000_000_000)), ("app_metadata", .object(admin ? [("role", .string("admin"))] : [])),
            ]))
        }
        return PolicyDeployment(deployment: deployment, tokens: [
            .anon: deployment.keys.anonKey, .service: deployment.keys.serviceRoleKey,
            .userA: try await token(userA), .userB: try await token(userB), .admin: try await token(adminUser, admin: true),
        ], publisher: publisher)
    }

    func request(_ actor: Actor, _ method: HTTPRequest.Method, _ uri: String, body: String? = nil, prefer: String? = "return=representation",
                 headers extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers: HTTPFields = [HTTPField.Name("apikey")!: deployment.keys.anonKey, .authorization: "Bearer \(tokens[actor]!)"]
        if let prefer { headers[HTTPField.Name("Prefer")!] = prefer }
        if body != nil { headers[.contentType] = "application/json" }
        for field in extra { headers[field.name] = field.value }
        let app = Application(router: buildRouter(configuration: deployment.configuration, services: deployment.services))
        let frozen = headers
        return try await app.test(.router) { client in
            try await client.execute(uri: uri, method: method, headers: frozen, body: body.map { ByteBuffer(string: $0) })
        }
    }

    /// The ids of every row of `table`, read as the service role.
    func allIDs(_ table: String) async throws -> [String] {
        try await request(.service, .get, "/rest/v1/\(table)?select=id&order=id", prefer: nil).ids
    }
}

@Suite("Policy matrix: reads")
struct ReadPolicyMatrixTests {
    static let expected: [(String, [Actor: [String]])] = [
        ("places", [.anon: ["bloom", "cafe-nour", "kudu", "no-english", "orchard"], .userA: ["bloom", "cafe-nour", "kudu", "no-english", "orchard"],
                    .userB: ["bloom", "cafe-nour", "kudu", "no-english", "orchard"],
                    .admin: ["bloom", "cafe-nour", "closed-cafe", "kudu", "no-english", "orchard"], .service: ["bloom", "cafe-nour", "closed-cafe", "kudu", "no-english", "orchard"]]),
        ("favorites", [.anon: [], .userA: [PolicyDeployment.favoriteA], .userB: [PolicyDeployment.favoriteB], .admin: [],
                       .service: [PolicyDeployment.favoriteA, PolicyDeployment.favoriteB]]),
        ("reviews", Dictionary(uniqueKeysWithValues: Actor.allCases.map { ($0, [PolicyDeployment.reviewA]) })),
        ("categories", Dictionary(uniqueKeysWithValues: Actor.allCases.map { ($0, ["cafe"]) })),
        ("menu_prices", [.anon: [], .userA: [], .userB: [], .admin: [], .service: ["*"]]),
        ("perfumes", Dictionary(uniqueKeysWithValues: Actor.allCases.map { ($0, []) })),
    ]

    @Test(arguments: Engine.allCases, Actor.allCases)
    func eachRoleSeesExactlyItsRows(engine: Engine, actor: Actor) async throws {
        let deployment = try await PolicyDeployment.make(engine: engine)
        for (table, byActor) in Self.expected {
            let response = try await deployment.request(actor, .get, "/rest/v1/\(table)?select=id&order=id", prefer: "count=exact")
            #expect(response.status == .ok || response.status == .partialContent, "\(table) as \(actor)")
            let expected = byActor[actor] ?? []
            if expected == ["*"] {
                #expect(response.ids.count == 1, "\(table) as \(actor)")
            } else {
                #expect(response.ids == expected, "\(table) as \(actor)")
                #expect(response.header("Content-Range")?.hasSuffix("/\(expected.count)") == true, "count of \(table) as \(actor)")
            }
        }
    }
}

/// One write and what it must do: the status, the rows returned, and the rows of the table afterwards.
struct WriteCase: Sendable, CustomTestStringConvertible {
    let actor: Actor
    let method: HTTPRequest.Method
    let uri: String
    let body: String?
    let status: HTTPResponse.Status
    let code: String?
    let returned: Int
    /// The table read back by the service role, and a predicate on its ids.
    let table: String
    let after: @Sendable ([String]) -> Bool
    let label: String

    var testDescription: String { label }

    init(_ label: String, _ actor: Actor, _ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil, status: HTTPResponse.Status,
         code: String? = nil, returned: Int = 0, table: String, after: @escaping @Sendable ([String]) -> Bool) {
        self.label = label
        self.actor = actor
        self.method = method
        self.uri = uri
        self.body = body
        self.status = status
        self.code = code
        self.returned = returned
        self.table = table
        self.after = after
    }
}

private let newPlace = #"{"id":"new-place","name_ar":"جديد","category":"cafe","category_ar":"كافيه"}"#
private func favorite(for user: String) -> String { #"{"user_id":"\#(user)","place_id":"bloom"}"# }
private let a = PolicyDeployment.userA, b = PolicyDeployment.userB

@Suite("Policy matrix: writes")
struct WritePolicyMatrixTests {
    static let cases: [WriteCase] = [
        // places: readable where active, written by admins only (app_metadata.role).
        WriteCase("anon inserts a place", .anon, .post, "/rest/v1/places", newPlace, status: .unauthorized, code: "42501", table: "places") { !$0.contains("new-place") },
        WriteCase("user inserts a place", .userA, .post, "/rest/v1/places", newPlace, status: .forbidden, code: "42501", table: "places") { !$0.contains("new-place") },
        WriteCase("admin inserts a place", .admin, .post, "/rest/v1/places", newPlace, status: .created, returned: 1, table: "places") { $0.contains("new-place") },
        WriteCase("service inserts a place", .service, .post, "/rest/v1/places", newPlace, status: .created, returned: 1, table: "places") { $0.contains("new-place") },
        WriteCase("user renames a place", .userA, .patch, "/rest/v1/places?id=eq.kudu", #"{"name_en":"X"}"#, status: .ok, returned: 0, table: "places") { $0.count == 6 },
        WriteCase("admin renames a place", .admin, .patch, "/rest/v1/places?id=eq.kudu", #"{"name_en":"X"}"#, status: .ok, returned: 1, table: "places") { $0.count == 6 },
        WriteCase("admin updates an inactive place", .admin, .patch, "/rest/v1/places?id=eq.closed-cafe", #"{"is_active":true}"#, status: .ok, returned: 1, table: "places") { $0.count == 6 },
        WriteCase("user deletes a place", .userB, .delete, "/rest/v1/places?id=eq.kudu", status: .ok, returned: 0, table: "places") { $0.contains("kudu") },
        WriteCase("admin deletes a place", .admin, .delete, "/rest/v1/places?id=eq.kudu", status: .ok, returned: 1, table: "places") { !$0.contains("kudu") },
        // favorites: owned by their user.
        WriteCase("anon adds a favorite", .anon, .post, "/rest/v1/favorites", favorite(for: a), status: .unauthorized, code: "42501", table: "favorites") { $0.count == 2 },
        WriteCase("user adds own favorite", .userA, .post, "/rest/v1/favorites", favorite(for: a), status: .created, returned: 1, table: "favorites") { $0.count == 3 },
        WriteCase("user adds a favorite for another", .userA, .post, "/rest/v1/favorites", favorite(for: b), status: .forbidden, code: "42501", table: "favorites") { $0.count == 2 },
        WriteCase("user edits own favorite", .userA, .patch, "/rest/v1/favorites?id=eq.\(PolicyDeployment.favoriteA)", #"{"note":"mine"}"#, status: .ok, returned: 1, table: "favorites") { $0.count == 2 },
        WriteCase("user edits another's favorite", .userA, .patch, "/rest/v1/favorites?id=eq.\(PolicyDeployment.favoriteB)", #"{"note":"x"}"#, status: .ok, returned: 0, table: "favorites") { $0.count == 2 },
        WriteCase("user gives a favorite away", .userA, .patch, "/rest/v1/favorites?id=eq.\(PolicyDeployment.favoriteA)", #"{"user_id":"\#(b)"}"#, status: .forbidden, code: "42501", table: "favorites") { $0.count == 2 },
        WriteCase("user deletes another's favorite", .userB, .delete, "/rest/v1/favorites?id=eq.\(PolicyDeployment.favoriteA)", status: .ok, returned: 0, table: "favorites") { $0.contains(PolicyDeployment.favoriteA) },
        WriteCase("user deletes own favorite", .userA, .delete, "/rest/v1/favorites?id=eq.\(PolicyDeployment.favoriteA)", status: .ok, returned: 1, table: "favorites") { !$0.contains(PolicyDeployment.favoriteA) },
        WriteCase("duplicate favorite", .userB, .post, "/rest/v1/favorites", #"{"user_id":"\#(b)","place_id":"kudu"}"#, status: .conflict, code: "23505", table: "favorites") { $0.count == 2 },
        // reviews: read by all, created and edited by their author; no delete policy.
        WriteCase("user writes a review", .userB, .post, "/rest/v1/reviews", #"{"user_id":"\#(b)","place_id":"kudu","rating":5}"#, status: .created, returned: 1, table: "reviews") { $0.count == 2 },
        WriteCase("user writes a review as another", .userB, .post, "/rest/v1/reviews", #"{"user_id":"\#(a)","place_id":"kudu","rating":5}"#, status: .forbidden, code: "42501", table: "reviews") { $0.count == 1 },
        WriteCase("author edits review", .userA, .patch, "/rest/v1/reviews?id=eq.\(PolicyDeployment.reviewA)", #"{"rating":2}"#, status: .ok, returned: 1, table: "reviews") { $0.count == 1 },
        WriteCase("other edits review", .userB, .patch, "/rest/v1/reviews?id=eq.\(PolicyDeployment.reviewA)", #"{"rating":1}"#, status: .ok, returned: 0, table: "reviews") { $0.count == 1 },
        WriteCase("author deletes review", .userA, .delete, "/rest/v1/reviews?id=eq.\(PolicyDeployment.reviewA)", status: .ok, returned: 0, table: "reviews") { $0.count == 1 },
        WriteCase("review rating out of range", .userB, .post, "/rest/v1/reviews", #"{"user_id":"\#(b)","place_id":"kudu","rating":9}"#, status: .badRequest, code: "23514", table: "reviews") { $0.count == 1 },
        // delivery prices: read-only for everyone but the service role.
        WriteCase("admin adds a delivery price", .admin, .post, "/rest/v1/delivery_prices", #"{"place_id":"kudu","app_name":"Jahez"}"#, status: .forbidden, code: "42501", table: "delivery_prices") { $0.count == 1 },
        WriteCase("service adds a delivery price", .service, .post, "/rest/v1/delivery_prices", #"{"place_id":"kudu","app_name":"Jahez"}"#, status: .created, returned: 1, table: "delivery_prices") { $0.count == 2 },
        WriteCase("user deletes delivery prices", .userA, .delete, "/rest/v1/delivery_prices?app_name=eq.Jahez", status: .ok, returned: 0, table: "delivery_prices") { $0.count == 1 },
        // menu_prices: no policy, closed.
        WriteCase("admin adds a menu price", .admin, .post, "/rest/v1/menu_prices", #"{"place_id":"kudu","item_name_ar":"شاي","price":3}"#, status: .forbidden, code: "42501", table: "menu_prices") { $0.count == 1 },
    ]

    @Test(arguments: Engine.allCases, cases)
    func writeDoesExactlyWhatPoliciesAllow(engine: Engine, _ write: WriteCase) async throws {
        let deployment = try await PolicyDeployment.make(engine: engine)
        let response = try await deployment.request(write.actor, write.method, write.uri, body: write.body)
        #expect(response.status == write.status, "\(response.text)")
        if let code = write.code {
            #expect(response.errorCode == code)
        } else {
            guard case .array(let rows)? = response.json else { Issue.record("expected an array: \(response.text)"); return }
            #expect(rows.count == write.returned)
        }
        let ids = try await deployment.allIDs(write.table)
        #expect(write.after(ids), "rows afterwards: \(ids)")
    }

    @Test func theDesignsTopLevelRoleClaimGrantsNothing() async throws {
        // places design §3.4 checks auth.jwt() ->> 'role' = 'admin'; that claim is the Postgres role, so a token
        // whose role claim is "admin" is refused outright, and an authenticated token cannot become admin by it.
        let deployment = try await PolicyDeployment.make()
        let roleAdmin = try await deployment.deployment.services.verifier.issueToken(claims: .object([
            ("sub", .string(PolicyDeployment.userA)), ("role", .string("admin")), ("exp", .integer(4_000_000_000)),
        ]))
        let response = try await deployment.deployment.get("/rest/v1/places", headers: [.authorization: "Bearer \(roleAdmin)"])
        #expect(response.status == .unauthorized)
        #expect(response.errorCode == "PGRST301")
    }
}

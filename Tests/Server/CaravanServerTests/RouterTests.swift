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

/// A deployment on a fresh store of `engine` with a handful of places, served through the real router.
struct TestDeployment {
    let services: CaravanServices
    let keys: APIKeys
    let secret: SigningSecret
    var configuration: ServerConfiguration

    static let places = """
    [
      {"id": "cafe-nour", "name_ar": "مقهى نور", "name_en": "Café Nour", "category_en": "cafe", "category": "كافيه", "lat": 24.7, "lng": 46.7, "google_rating": 4.5, "tags": ["cafe", "quiet"], "phone": "+966500000001"},
      {"id": "bloom", "name_ar": "بلوم", "name_en": "Bloom Cafe", "category_en": "cafe", "category": "كافيه", "google_rating": 4.8, "tags": ["cafe"]},
      {"id": "kudu", "name_ar": "كودو", "name_en": "Kudu", "category_en": "restaurant", "category": "مطاعم", "tags": ["restaurant"]},
      {"id": "orchard", "name_ar": "اورشارد", "name_en": "ORCHARD, Riyadh", "category_en": "cafe", "category": "كافيه", "google_rating": 3.9},
      {"id": "no-english", "name_ar": "مكان", "category_en": "park", "category": "حدائق"}
    ]
    """

    static func make(engine: Engine = .sqlite, maxRows: Int? = 1000, publisher: ChangePublisher = ChangePublisher(),
                     now: @escaping @Sendable () -> Int64 = { 1_800_000_000 }) async throws -> TestDeployment {
        let directory = NSTemporaryDirectory() + "caravan-router-" + UUID().uuidString
        let catalog = Catalog(modules: [SystemModule.module, PlacesModule.module])
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try await engine.makeStore(migrations: catalog.migrations)
        let summary = try await PlacesImporter(pipeline: WritePipeline(store: store, publisher: ChangePublisher()), access: catalog.access(for: .serviceRole)).run(try PlacesImporter.entries(of: try JSONParser.parse(places)), dryRun: false)
        precondition(summary.inserted == 5)
        let secret = try SigningSecret.loadOrCreate(in: directory, now: 1_700_000_000)
        let verifier = await TokenVerifier(secret: secret, now: now)
        var configuration = ServerConfiguration()
        configuration.maxRows = maxRows
        return TestDeployment(
            services: CaravanServices(store: store, catalog: catalog, verifier: verifier, publisher: publisher),
            keys: try await verifier.apiKeys(), secret: secret, configuration: configuration
        )
    }

    func get(_ uri: String, headers: HTTPFields = [:], method: HTTPRequest.Method = .get, key: String? = nil) async throws -> TestResponse {
        var headers = headers
        if let key = key ?? Optional(keys.anonKey), headers[HTTPField.Name("apikey")!] == nil, !key.isEmpty {
            headers[HTTPField.Name("apikey")!] = key
        }
        let app = Application(router: buildRouter(configuration: configuration, services: services))
        let frozenHeaders = headers
        return try await app.test(.router) { client in
            try await client.execute(uri: uri, method: method, headers: frozenHeaders)
        }
    }
}

extension TestResponse {
    var json: JSONValue? { try? JSONParser.parse(String(buffer: body)) }
    var text: String { String(buffer: body) }
    func header(_ name: String) -> String? { headers[HTTPField.Name(name)!] }
    /// The ids of a JSON array of rows.
    var ids: [String] {
        guard case .array(let rows)? = json else { return [] }
        return rows.compactMap { if case .string(let id)? = $0["id"] { id } else { nil } }
    }
    var errorCode: String? { if case .string(let code)? = json?["code"] { code } else { nil } }
}

@Suite("REST reads through the router")
struct RouterTests {
    @Test(arguments: Engine.allCases)
    func filteredOrderedCountedRead(engine: Engine) async throws {
        let deployment = try await TestDeployment.make(engine: engine)
        let response = try await deployment.get("/rest/v1/places?select=id,name_en&category=eq.cafe&order=google_rating.desc.nullslast&limit=2",
                                                headers: [HTTPField.Name("Prefer")!: "count=exact"])
        #expect(response.status == .partialContent)
        #expect(response.header("Content-Range") == "0-1/3")
        #expect(response.ids == ["bloom", "cafe-nour"])
        #expect(response.text == #"[{"id":"bloom","name_en":"Bloom Cafe"},{"id":"cafe-nour","name_en":"Café Nour"}]"#)
        let withoutCount = try await deployment.get("/rest/v1/places?category=eq.cafe&limit=2")
        #expect(withoutCount.status == .ok)
        #expect(withoutCount.header("Content-Range") == "0-1/*")
    }

    @Test(arguments: Engine.allCases)
    func plusSpacesEncodedPlusAndOrTrees(engine: Engine) async throws {
        let deployment = try await TestDeployment.make(engine: engine)
        #expect(try await deployment.get("/rest/v1/places?name_en=eq.Caf%C3%A9+Nour").ids == ["cafe-nour"])
        #expect(try await deployment.get("/rest/v1/places?phone=eq.%2B966500000001").ids == ["cafe-nour"])
        #expect(try await deployment.get("/rest/v1/places?or=(name_en.ilike.*bloom*,google_rating.gte.4.5)").ids == ["bloom", "cafe-nour"])
        #expect(try await deployment.get(#"/rest/v1/places?name_en=not.in.("ORCHARD,%20Riyadh",Kudu)"#).ids == ["bloom", "cafe-nour"])
        #expect(try await deployment.get("/rest/v1/places?tags=cs.%7Bcafe,quiet%7D").ids == ["cafe-nour"])
    }

    @Test(arguments: Engine.allCases)
    func singleObjectMediaType(engine: Engine) async throws {
        let deployment = try await TestDeployment.make(engine: engine)
        let object: HTTPFields = [.accept: "application/vnd.pgrst.object+json"]
        let one = try await deployment.get("/rest/v1/places?id=eq.kudu&select=id,is_active", headers: object)
        #expect(one.status == .ok)
        #expect(one.text == #"{"id":"kudu","is_active":true}"#)
        let none = try await deployment.get("/rest/v1/places?id=eq.missing", headers: object)
        #expect(none.status == .notAcceptable)
        #expect(none.errorCode == "PGRST116")
        #expect(none.json?["details"] == .string("The result contains 0 rows"))
        let two = try await deployment.get("/rest/v1/places?category=eq.cafe&limit=2", headers: object)
        #expect(two.json?["details"] == .string("The result contains 2 rows"))
    }

    @Test(arguments: Engine.allCases)
    func csvAndHead(engine: Engine) async throws {
        let deployment = try await TestDeployment.make(engine: engine)
        let csv = try await deployment.get("/rest/v1/places?select=id,name_en,google_rating&category=eq.cafe&order=id", headers: [.accept: "text/csv"])
        #expect(csv.header("Content-Type") == "text/csv; charset=utf-8")
        #expect(csv.text == "id,name_en,google_rating\nbloom,Bloom Cafe,4.8\ncafe-nour,Café Nour,4.5\norchard,\"ORCHARD, Riyadh\",3.9")
        let head = try await deployment.get("/rest/v1/places?category=eq.cafe", headers: [HTTPField.Name("Prefer")!: "count=exact"], method: .head)
        #expect(head.status == .ok)
        #expect(head.header("Content-Range") == "0-2/3")
        #expect(head.body.readableBytes == 0)
    }

    @Test(arguments: Engine.allCases)
    func errorsHaveTheFourKeysAndTheRightCodes(engine: Engine) async throws {
        let deployment = try await TestDeployment.make(engine: engine)
        let cases: [(String, HTTPFields, HTTPResponse.Status, String)] = [
            ("/rest/v1/places?name_en=foo.bar", [:], .badRequest, "PGRST100"),
            ("/rest/v1/places?select=nope", [:], .badRequest, "42703"),
            ("/rest/v1/places?order=nope.desc", [:], .badRequest, "42703"),
            ("/rest/v1/nowhere", [:], .notFound, "PGRST205"),
            ("/rest/v1/users", [:], .notFound, "PGRST205"),
            ("/rest/v1/places?offset=100", [HTTPField.Name("Prefer")!: "count=exact"], .rangeNotSatisfiable, "PGRST103"),
            ("/rest/v1/places?limit=-1", [:], .rangeNotSatisfiable, "PGRST103"),
            ("/rest/v1/places?google_rating=like.4*", [:], .badRequest, "PGRST127"),
            ("/rest/v1/places?google_rating=eq.high", [:], .badRequest, "22P02"),
            ("/rest/v1/places?select=id,nowhere(*)", [:], .badRequest, "PGRST200"),
            ("/rest/v1/places", [.accept: "application/xml"], .notAcceptable, "PGRST107"),
            ("/rest/v1/places", [HTTPField.Name("Accept-Profile")!: "private"], .notAcceptable, "PGRST106"),
        ]
        for (uri, headers, status, code) in cases {
            let response = try await deployment.get(uri, headers: headers)
            #expect(response.status == status, "\(uri)")
            #expect(response.errorCode == code, "\(uri)")
            guard case .object(let pairs)? = response.json else { Issue.record("no JSON body for \(uri)"); continue }
            #expect(Set(pairs.map(\.key)) == ["code", "details", "hint", "message"], "\(uri)")
        }
        let offset = try await deployment.get("/rest/v1/places?offset=9", headers: [HTTPField.Name("Prefer")!: "count=exact"])
        #expect(offset.json?["details"] == .string("An offset of 9 was requested, but there are only 5 rows."))
        let column = try await deployment.get("/rest/v1/places?select=nope")
        #expect(column.json?["message"] == .string("column places.nope does not exist"))
    }

    @Test(arguments: Engine.allCases)
    func hostileInputIsRefusedWithoutEffect(engine: Engine) async throws {
        let deployment = try await TestDeployment.make(engine: engine)
        for uri in ["/rest/v1/places?select=id;DROP%20TABLE%20places", "/rest/v1/places?order=id;DROP%20TABLE%20places",
                    "/rest/v1/places?id%3Bdrop=eq.1", "/rest/v1/places%22%3B--"] {
            let response = try await deployment.get(uri)
            #expect([HTTPResponse.Status.badRequest, .notFound].contains(response.status), "\(uri)")
        }
        let injectedValue = try await deployment.get("/rest/v1/places?id=eq.x'%20OR%20'1'='1")
        #expect(injectedValue.ids.isEmpty)
        #expect(try await deployment.get("/rest/v1/places").ids.count == 5)
    }

    @Test(arguments: Engine.allCases)
    func maxRowsCapsResponsesButNotCounts(engine: Engine) async throws {
        let deployment = try await TestDeployment.make(engine: engine, maxRows: 2)
        let response = try await deployment.get("/rest/v1/places", headers: [HTTPField.Name("Prefer")!: "count=exact"])
        #expect(response.ids.count == 2)
        #expect(response.header("Content-Range") == "0-1/5")
    }
}

@Suite("Keys and roles")
struct KeyTests {
    @Test(arguments: Engine.allCases)
    func everyRequestNeedsAKey(engine: Engine) async throws {
        let deployment = try await TestDeployment.make(engine: engine)
        let response = try await deployment.get("/rest/v1/places", key: "")
        #expect(response.status == .unauthorized)
        #expect(response.errorCode == "PGRST302")
        #expect(try await deployment.get("/health", key: "").status == .ok)
    }

    @Test(arguments: Engine.allCases)
    func corsPreflightNeedsNoKey(engine: Engine) async throws {
        let deployment = try await TestDeployment.make(engine: engine)
        let preflight = try await deployment.get("/rest/v1/places", headers: [
            .origin: "https://app.example", HTTPField.Name("Access-Control-Request-Method")!: "GET",
        ], method: .options, key: "")
        let defaultHeaders = try await deployment.get("/rest/v1/places", method: .options, key: "")
        #expect(preflight.status == .ok)
        #expect(preflight.header("Access-Control-Allow-Origin") == "*")
        #expect(defaultHeaders.header("Access-Control-Allow-Headers")?.contains("apikey") == true)
        let read = try await deployment.get("/rest/v1/places?limit=1", headers: [.origin: "https://app.example"])
        #expect(read.header("Access-Control-Expose-Headers")?.contains("Content-Range") == true)
    }

    @Test(arguments: Engine.allCases)
    func closedByDefaultForAnonOpenForTheServiceRole(engine: Engine) async throws {
        let deployment = try await TestDeployment.make(engine: engine)
        let anon = try await deployment.get("/rest/v1/menu_prices", headers: [HTTPField.Name("Prefer")!: "count=exact"])
        #expect(anon.status == .ok)
        #expect(anon.text == "[]")
        #expect(anon.header("Content-Range") == "*/0")
        #expect(try await deployment.get("/rest/v1/menu_prices", key: deployment.keys.serviceRoleKey).status == .ok)
        #expect(try await deployment.get("/rest/v1/places", key: deployment.keys.anonKey).ids.count == 5)
    }

    @Test(arguments: Engine.allCases)
    func bearerTokenDecidesTheRole(engine: Engine) async throws {
        let deployment = try await TestDeployment.make(engine: engine)
        let anonAsBearer = try await deployment.get("/rest/v1/places", headers: [.authorization: "Bearer \(deployment.keys.anonKey)"], key: "")
        #expect(anonAsBearer.ids.count == 5)
        let tampered = deployment.keys.anonKey.dropLast(3) + "AAA"
        let bad = try await deployment.get("/rest/v1/places", headers: [.authorization: "Bearer \(tampered)"])
        #expect(bad.status == .unauthorized)
        #expect(bad.errorCode == "PGRST301")
        #expect(bad.header("WWW-Authenticate")?.hasPrefix("Bearer error=\"invalid_token\"") == true)
    }

    @Test(arguments: Engine.allCases)
    func algNoneAndForeignSecretsAreRejected(engine: Engine) async throws {
        let deployment = try await TestDeployment.make(engine: engine)
        func base64url(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let unsigned = base64url(#"{"alg":"none","typ":"JWT"}"#) + "." + base64url(#"{"role":"service_role","exp":9999999999}"#) + "."
        let none = try await deployment.get("/rest/v1/menu_prices", key: unsigned)
        #expect(none.status == .unauthorized)
        #expect(none.errorCode == "PGRST301")
        let other = try await TestDeployment.make()
        let foreign = try await deployment.get("/rest/v1/places", key: other.keys.serviceRoleKey)
        #expect(foreign.errorCode == "PGRST301")
        // A key from another deployment says so, and how to get this one's (a tampered or unsigned token does not).
        guard case .string(let hint)? = foreign.json?["hint"] else { Issue.record("no hint: \(String(describing: foreign.json))"); return }
        #expect(hint.contains("This deployment did not sign this key") && hint.contains("caravan keys") && hint.contains("--data-dir"))
        #expect(none.json?["hint"] == .null)
    }

    @Test(arguments: Engine.allCases)
    func expiredKeysAreRejectedWithPGRST303(engine: Engine) async throws {
        let farFuture = try await TestDeployment.make(engine: engine, now: { 1_700_000_000 + 11 * 365 * 24 * 3600 })
        let response = try await farFuture.get("/rest/v1/places")
        #expect(response.status == .unauthorized)
        #expect(response.errorCode == "PGRST303")
        #expect(response.json?["message"] == .string("JWT expired"))
    }

    @Test func keysAreDeterministicAndTheSecretFileIsPrivate() async throws {
        let directory = NSTemporaryDirectory() + "caravan-keys-" + UUID().uuidString
        let first = try SigningSecret.loadOrCreate(in: directory, now: 1_700_000_000)
        let again = try SigningSecret.loadOrCreate(in: directory, now: 1_800_000_000)
        #expect(first.bytes == again.bytes)
        #expect(again.createdAt == 1_700_000_000)
        let mode = try FileManager.default.attributesOfItem(atPath: directory + "/jwt_secret.json")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let keysA = try await TokenVerifier(secret: first, now: { 0 }).apiKeys()
        let keysB = try await TokenVerifier(secret: again, now: { 0 }).apiKeys()
        #expect(keysA == keysB)
        let otherDirectory = NSTemporaryDirectory() + "caravan-keys-" + UUID().uuidString
        let other = try SigningSecret.loadOrCreate(in: otherDirectory, now: 1_700_000_000)
        #expect(other.bytes != first.bytes)
    }
}

@Suite("Configuration precedence")
struct ConfigurationTests {
    @Test func flagsBeatEnvironmentBeatFileBeatDefaults() throws {
        let defaults = try ServerConfiguration.resolve(flags: [:], environment: [:], file: [:])
        #expect(defaults.port == 8080)
        #expect(defaults.host == "127.0.0.1")
        #expect(defaults.dataDirectory == "./caravan-data")
        let fromFile = try ServerConfiguration.resolve(flags: [:], environment: [:], file: ["port": "9000", "host": "0.0.0.0"])
        #expect(fromFile.port == 9000)
        let fromEnvironment = try ServerConfiguration.resolve(flags: [:], environment: ["CARAVAN_PORT": "9100"], file: ["port": "9000", "host": "0.0.0.0"])
        #expect(fromEnvironment.port == 9100)
        #expect(fromEnvironment.host == "0.0.0.0")
        let fromFlags = try ServerConfiguration.resolve(flags: ["port": "9200"], environment: ["CARAVAN_PORT": "9100"], file: ["port": "9000"])
        #expect(fromFlags.port == 9200)
        #expect(try ServerConfiguration.resolve(flags: ["max_rows": "0"], environment: [:], file: [:]).maxRows == nil)
        #expect(defaults.aggregatesEnabled == false, "aggregates are off unless turned on, as PostgREST's db-aggregates-enabled")
        #expect(try ServerConfiguration.resolve(flags: [:], environment: ["CARAVAN_AGGREGATES_ENABLED": "true"], file: [:]).aggregatesEnabled)
        #expect(try ServerConfiguration.resolve(flags: [:], environment: [:], file: ["aggregates_enabled": "true"]).aggregatesEnabled)
        #expect(throws: CaravanError.self) { try ServerConfiguration.resolve(flags: ["aggregates_enabled": "yes"], environment: [:], file: [:]) }
    }

    @Test func badValuesAndUnknownFileKeysAreRefused() throws {
        #expect(throws: CaravanError.self) { try ServerConfiguration.resolve(flags: ["port": "eighty"], environment: [:], file: [:]) }
        #expect(throws: CaravanError.self) { try ServerConfiguration.resolve(flags: [:], environment: ["CARAVAN_LOG_LEVEL": "loud"], file: [:]) }
        let path = NSTemporaryDirectory() + "caravan-config-" + UUID().uuidString + ".json"
        try Data(#"{"port": 9000, "prot": 1}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: CaravanError.self) { try ServerConfiguration.readFile(at: path) }
        try Data(#"{"port": 9000, "data_dir": "/srv/caravan"}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(try ServerConfiguration.readFile(at: path) == ["port": "9000", "data_dir": "/srv/caravan"])
    }
}

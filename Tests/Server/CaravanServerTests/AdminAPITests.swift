import CaravanAuth
import CaravanCore
import CaravanTesting
import CaravanRealtime
import CaravanServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOPosix
import Places
import Testing

/// The admin console's server side through the real router: `/admin/api/*` answers the service role only (the
/// service key, or the token an admin gets from `POST /admin/api/session`), and the static shell holds no data.
@Suite struct AdminAPITests {
    static let password = "long-enough-1"

    /// A deployment with auth, realtime and the places rows of `TestDeployment`, an admin and a plain user.
    struct Console {
        let app: Application<RouterResponder<CaravanRequestContext>>
        let keys: APIKeys
        let auth: AuthService
        let admin: AuthUser
        let user: AuthUser

        init(metrics: ServerMetrics? = nil) async throws {
            let catalog = Catalog(modules: [SystemModule.module, AuthModule.module, PlacesModule.module])
            let store = try await Engine.sqlite.makeStore(migrations: catalog.migrations)
            let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
            let entries = try PlacesImporter.entries(of: try JSONParser.parse(TestDeployment.places))
            _ = try await PlacesImporter(pipeline: pipeline, access: catalog.access(for: .serviceRole)).run(entries, dryRun: false)
            let directory = NSTemporaryDirectory() + "caravan-admin-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let secret = try SigningSecret.loadOrCreate(in: directory, now: 1_700_000_000)
            let verifier = await TokenVerifier(secret: secret, now: { 1_800_000_000 })
            var configuration = AuthConfiguration()
            configuration.bcryptCost = 4
            let logger = Logger(label: "test")
            auth = try await AuthService(store: store, pipeline: pipeline, catalog: catalog, secret: secret, verifier: verifier,
                                         configuration: configuration, baseURL: "http://test",
                                         sender: OutboxSender(pipeline: pipeline, catalog: catalog, logger: logger, clock: .fixed(microseconds: 0)),
                                         threadPool: .singleton, logger: logger, clock: .fixed(microseconds: 1_800_000_000_000_000), ids: .random)
            let realtime = makeRealtimeService(store: store, catalog: catalog, verifier: verifier, limits: RealtimeLimits(), logger: logger)
            let services = CaravanServices(store: store, catalog: catalog, verifier: verifier, pipeline: pipeline, auth: auth,
                                           metrics: metrics, realtime: realtime)
            app = Application(router: buildRouter(configuration: ServerConfiguration(), services: services))
            keys = try await verifier.apiKeys()
            admin = try await auth.adminCreateUser(.serviceRole, NewUser(email: "admin@example.com", password: AdminAPITests.password,
                                                                         appMetadata: .object([("role", .string("admin"))]), emailConfirmed: true))
            user = try await auth.adminCreateUser(.serviceRole, NewUser(email: "user@example.com", password: AdminAPITests.password, emailConfirmed: true))
        }

        func accessToken(_ email: String) async throws -> String {
            try await auth.signIn(email: email, phone: nil, password: AdminAPITests.password, client: AuthClient(ip: "127.0.0.1")).accessToken
        }

        /// One request; `key` goes in `apikey` and as the Bearer.
        func send(_ uri: String, _ method: HTTPRequest.Method = .get, key: String?, body: String? = nil,
                  headers extra: HTTPFields = [:]) async throws -> TestResponse {
            var headers = extra
            headers[.contentType] = "application/json"
            if let key {
                headers[HTTPField.Name("apikey")!] = key
                headers[.authorization] = "Bearer \(key)"
            }
            let frozen = headers
            return try await app.test(.router) { client in
                try await client.execute(uri: uri, method: method, headers: frozen, body: body.map { ByteBuffer(string: $0) })
            }
        }

        func consoleToken() async throws -> String {
            let response = try await send("/admin/api/session", .post, key: nil,
                                          body: #"{"email":"admin@example.com","password":"\#(AdminAPITests.password)"}"#)
            #expect(response.status == .ok)
            guard case .string(let token)? = response.json?["access_token"] else { throw CaravanError(.invalidValue, "no access_token") }
            return token
        }
    }

    static let endpoints: [(String, HTTPRequest.Method)] = [
        ("/admin/api/overview", .get), ("/admin/api/tables", .get), ("/admin/api/changes", .get), ("/admin/api/realtime", .get),
        ("/admin/api/session", .get), ("/admin/api/tables/favorites/schema", .get), ("/admin/api/keys", .get), ("/admin/api/requests", .get),
    ]

    @Test func onlyTheServiceRoleReadsTheAdminAPI() async throws {
        let console = try await Console()
        let userToken = try await console.accessToken("user@example.com")
        let adminToken = try await console.accessToken("admin@example.com")
        let consoleToken = try await console.consoleToken()
        for (uri, method) in Self.endpoints {
            let none = try await console.send(uri, method, key: nil)
            #expect(none.status == .unauthorized, "\(uri) without a key")
            #expect(none.errorCode == "PGRST302")
            let anon = try await console.send(uri, method, key: console.keys.anonKey)
            #expect(anon.status == .unauthorized, "\(uri) with the anon key")
            #expect(anon.errorCode == "CARAVAN_ADMIN_SIGN_IN_REQUIRED")
            for token in [userToken, adminToken] {
                let user = try await console.send(uri, method, key: token)
                #expect(user.status == .forbidden, "\(uri) with a user's token")
                #expect(user.errorCode == "CARAVAN_ADMIN_REQUIRED")
                #expect(user.json?["message"] != nil && user.json?["hint"] != nil && user.json?["details"] != nil)
            }
            for token in [console.keys.serviceRoleKey, consoleToken] {
                let allowed = try await console.send(uri, method, key: token)
                #expect(allowed.status == .ok, "\(uri) as the service role: \(allowed.text)")
                #expect(allowed.header("Cache-Control") == "no-store")
            }
        }
    }

    @Test func anAdminSignsInAndAPlainUserIsRefused() async throws {
        let console = try await Console()
        let token = try await console.consoleToken()
        let session = try await console.send("/admin/api/session", key: token)
        #expect(session.json?["role"] == .string("service_role"))
        #expect(session.json?["user"]?["email"] == .string("admin@example.com"))
        // The console token is the service role on REST: it writes a row no policy lets a user write.
        let patched = try await console.send("/rest/v1/places?id=eq.kudu", .patch, key: token, body: #"{"name_en":"Kudu Olaya"}"#,
                                             headers: [HTTPField.Name("Prefer")!: "return=representation"])
        #expect(patched.status == .ok)
        #expect(patched.text.contains("Kudu Olaya"))

        let plain = try await console.send("/admin/api/session", .post, key: nil, body: #"{"email":"user@example.com","password":"\#(Self.password)"}"#)
        #expect(plain.status == .forbidden)
        #expect(plain.errorCode == "CARAVAN_NOT_ADMIN")
        let wrong = try await console.send("/admin/api/session", .post, key: nil, body: #"{"email":"admin@example.com","password":"wrong-password"}"#)
        #expect(wrong.status == .badRequest)
        #expect(wrong.errorCode == "invalid_credentials")
        #expect(!wrong.text.contains("admin@example.com"))

        // An admin's access token from /auth/v1/token can be exchanged too; a plain user's cannot.
        let exchanged = try await console.send("/admin/api/session", .post, key: try await console.accessToken("admin@example.com"))
        #expect(exchanged.status == .ok)
        let refused = try await console.send("/admin/api/session", .post, key: try await console.accessToken("user@example.com"))
        #expect(refused.status == .forbidden)
        #expect(refused.errorCode == "CARAVAN_NOT_ADMIN")
    }

    @Test func anAdminWhoseRoleWasRemovedGetsNoNewConsoleToken() async throws {
        let console = try await Console()
        let stale = try await console.accessToken("admin@example.com")
        _ = try await console.auth.adminUpdateUser(.serviceRole, id: console.admin.id, changes: UserChanges(appMetadata: .object([("role", .null)])))
        // The token still claims the admin role; the database decides.
        let refused = try await console.send("/admin/api/session", .post, key: stale)
        #expect(refused.status == .forbidden)
        #expect(refused.errorCode == "CARAVAN_NOT_ADMIN")
    }

    @Test func theChangeLogIsTailedAndFilteredByTable() async throws {
        let console = try await Console()
        let service = console.keys.serviceRoleKey
        let latest = try await console.send("/admin/api/changes?limit=2", key: service)
        guard case .array(let entries)? = latest.json?["changes"], case .integer(let head)? = latest.json?["head"] else {
            Issue.record("no changes in \(latest.text)")
            return
        }
        #expect(entries.count == 2)
        #expect(entries.last?["seq"] == .integer(head))
        _ = try await console.send("/rest/v1/places?id=eq.bloom", .patch, key: service, body: #"{"name_en":"Bloom"}"#)
        let tail = try await console.send("/admin/api/changes?table=places&after=\(head)", key: service)
        guard case .array(let fresh)? = tail.json?["changes"] else { Issue.record("no changes in \(tail.text)"); return }
        #expect(fresh.count == 1)
        #expect(fresh.first?["op"] == .string("update"))
        #expect(fresh.first?["record"]?["name_en"] == .string("Bloom"))
        #expect(fresh.first?["old_record"]?["name_en"] == .string("Bloom Cafe"))
        let unknown = try await console.send("/admin/api/changes?table=auth_users", key: service)
        #expect(unknown.status == .notFound)
        #expect(unknown.errorCode == "PGRST205")
        let bad = try await console.send("/admin/api/changes?limit=0", key: service)
        #expect(bad.status == .badRequest)
    }

    @Test func theSchemaViewShowsTheDeclarationAndThePoliciesPerCommand() async throws {
        let console = try await Console()
        let schema = try await console.send("/admin/api/tables/favorites/schema", key: console.keys.serviceRoleKey)
        #expect(schema.status == .ok)
        #expect(schema.json?["app"] == .string("places"))
        #expect(schema.json?["primary_key"] == .array([.string("id")]))
        guard case .array(let keys)? = schema.json?["foreign_keys"], case .array(let indexes)? = schema.json?["indexes"] else {
            Issue.record("no foreign keys or indexes in \(schema.text)")
            return
        }
        #expect(keys.contains { $0["table"] == .string("places") && $0["columns"] == .array([.string("place_id")]) })
        #expect(indexes.contains { $0["name"] == .string("idx_favorites_user") })
        #expect(schema.json?["has_policies"] == .bool(true))
        func first(_ command: String) -> JSONValue? {
            guard case .array(let items)? = schema.json?["commands"]?[command] else { return nil }
            return items.first
        }
        #expect(first("delete")?["using"] == .string("user_id = auth.uid()"))
        #expect(first("insert")?["check"] == .string("user_id = auth.uid()"))
        #expect(first("insert")?["using"] == .null)

        // An internal table has no policy: the service role only.
        let system = try await console.send("/admin/api/tables/auth_users/schema", key: console.keys.serviceRoleKey)
        #expect(system.json?["has_policies"] == .bool(false))
        #expect(system.json?["exposure"] == .string("secret"))
        let unknown = try await console.send("/admin/api/tables/nope/schema", key: console.keys.serviceRoleKey)
        #expect(unknown.status == .notFound)
        #expect(unknown.errorCode == "PGRST205")
    }

    @Test func theKeysPageGetsTheDeploymentKeys() async throws {
        let console = try await Console()
        let keys = try await console.send("/admin/api/keys", key: try await console.consoleToken())
        #expect(keys.json?["anon_key"] == .string(console.keys.anonKey))
        #expect(keys.json?["service_role_key"] == .string(console.keys.serviceRoleKey))
    }

    @Test func theRequestLogTailsRequestsWithoutSecrets() async throws {
        let console = try await Console()
        let service = console.keys.serviceRoleKey
        _ = try await console.send("/rest/v1/places?select=id&id=eq.kudu", key: service)
        _ = try await console.send("/storage/v1/object/sign/avatars/a.png?token=\(console.keys.anonKey)", key: nil)
        _ = try await console.send("/rest/v1/places", key: nil)
        let log = try await console.send("/admin/api/requests", key: service)
        #expect(!log.text.contains(console.keys.anonKey) && !log.text.contains(service))
        guard case .array(let entries)? = log.json?["requests"] else { Issue.record("no requests in \(log.text)"); return }
        #expect(entries.contains { $0["path"] == .string("/storage/v1/object/sign/avatars/a.png?token=…") })
        let read = entries.first { $0["path"] == .string("/rest/v1/places?select=id&id=eq.kudu") }
        #expect(read?["status"] == .integer(200))
        #expect(read?["role"] == .string("service_role"))
        #expect(read?["method"] == .string("GET"))
        let refused = entries.first { $0["path"] == .string("/rest/v1/places") }
        #expect(refused?["status"] == .integer(401))
        #expect(refused?["role"] == .null)
        // The tail's own polling is not kept; `after` gives only newer entries.
        #expect(!entries.contains { $0["path"] == .string("/admin/api/requests") })
        guard case .integer(let last)? = entries.last?["id"] else { Issue.record("no ids"); return }
        let after = try await console.send("/admin/api/requests?after=\(last)", key: service)
        #expect(after.json?["requests"] == .array([]))
    }

    @Test func signOutEverywhereEndsTheUsersSessions() async throws {
        let console = try await Console()
        let session = try await console.auth.signIn(email: "user@example.com", phone: nil, password: Self.password, client: AuthClient(ip: "127.0.0.1"))
        let userToken = session.accessToken
        let refused = try await console.send("/admin/api/users/\(console.user.id)/logout", .post, key: userToken)
        #expect(refused.status == .forbidden)
        let done = try await console.send("/admin/api/users/\(console.user.id)/logout", .post, key: console.keys.serviceRoleKey)
        #expect(done.status == .ok)
        await #expect(throws: AuthError.self) {
            _ = try await console.auth.refresh(session.refreshToken, client: AuthClient(ip: "127.0.0.1"))
        }
        let missing = try await console.send("/admin/api/users/\(UUID().uuidString)/logout", .post, key: console.keys.serviceRoleKey)
        #expect(missing.status == .notFound)
    }

    @Test func theShellLoadsWithoutAKeyAndHoldsNoData() async throws {
        let console = try await Console()
        let shell = try await console.send("/admin", key: nil)
        #expect(shell.status == .ok)
        #expect(shell.header("Content-Type") == "text/html; charset=utf-8")
        #expect(shell.header("Content-Security-Policy")?.contains("default-src 'self'") == true)
        #expect(shell.header("Cache-Control") == "no-cache")
        #expect(shell.header("X-Content-Type-Options") == "nosniff")
        #expect(!shell.text.contains("Kudu") && !shell.text.contains("@example.com"))
        let etag = try #require(shell.header("ETag"))
        let again = try await console.send("/admin/", key: nil, headers: [.ifNoneMatch: etag])
        #expect(again.status == .notModified)
        let script = try await console.send("/admin/app.js", key: nil)
        #expect(script.status == .ok)
        #expect(script.header("Content-Type") == "text/javascript; charset=utf-8")
        let style = try await console.send("/admin/style.css", key: nil)
        #expect(style.header("Content-Type") == "text/css; charset=utf-8")
        let missing = try await console.send("/admin/secrets.json", key: nil)
        #expect(missing.status == .notFound)
        let traversal = try await console.send("/admin/..%2FPackage.swift", key: nil)
        #expect(traversal.status == .notFound)
    }

    /// The console's files are compiled into the server (the EmbedFiles build plugin): each committed file is served
    /// byte for byte, with nothing read from disk at run time.
    @Test func everyCommittedConsoleFileIsServedByteForByte() async throws {
        let console = try await Console()
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/Server/CaravanServer/AdminConsole")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files.contains("index.html") && files.contains("app.js"))
        for file in files {
            let served = try await console.send("/admin/\(file)", key: nil)
            #expect(served.status == .ok, "\(file)")
            #expect(served.text == (try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)), "\(file) is served as committed")
        }
    }

    @Test func theConsoleCanBeTurnedOff() async throws {
        let configuration = try ServerConfiguration.resolve(flags: [:], environment: ["CARAVAN_ADMIN_CONSOLE": "false"], file: [:])
        #expect(!configuration.adminConsole)
        #expect(try ServerConfiguration.resolve(flags: [:], environment: [:], file: [:]).adminConsole)
        var deployment = try await TestDeployment.make()
        deployment.configuration.adminConsole = false
        #expect(try await deployment.get("/admin", key: "").status == .notFound)
        #expect(try await deployment.get("/admin/api/tables", key: deployment.keys.serviceRoleKey).status == .notFound)
    }

    @Test func theConsoleTokenInsertsAndDeletesRowsThroughREST() async throws {
        let console = try await Console()
        let token = try await console.consoleToken()
        let prefer: HTTPFields = [HTTPField.Name("Prefer")!: "return=representation"]
        let row = #"{"id":"console-insert","name_ar":"مكان","name_en":"Inserted","category":"cafe","category_ar":"كافيه"}"#
        let inserted = try await console.send("/rest/v1/places", .post, key: token, body: row, headers: prefer)
        #expect(inserted.status == .created, "\(inserted.text)")
        #expect(Self.first(inserted.json)?["name_en"] == .string("Inserted"))
        // The same endpoint refuses a plain user (places are written by admins' tokens or the service role only).
        let userToken = try await console.accessToken("user@example.com")
        let refused = try await console.send("/rest/v1/places?id=eq.console-insert", .delete, key: userToken, headers: prefer)
        #expect(refused.json == .array([]) || refused.status == .forbidden, "\(refused.status) \(refused.text)")
        let deleted = try await console.send("/rest/v1/places?id=eq.console-insert", .delete, key: token, headers: prefer)
        #expect(deleted.status == .ok)
        #expect(Self.first(deleted.json)?["id"] == .string("console-insert"))
        let gone = try await console.send("/rest/v1/places?id=eq.console-insert", key: console.keys.serviceRoleKey)
        #expect(gone.json == .array([]))
        // Both writes are in the change log, as the service role's.
        let changes = try await console.send("/admin/api/changes?table=places&limit=2", key: token)
        guard case .array(let entries)? = changes.json?["changes"] else { Issue.record("no changes in \(changes.text)"); return }
        #expect(entries.compactMap { $0["op"] } == [.string("insert"), .string("delete")])
        #expect(entries.allSatisfy { $0["primary_key"]?["id"] == .string("console-insert") || $0["record"]?["id"] == .string("console-insert") || $0["old_record"]?["id"] == .string("console-insert") })
    }

    static func first(_ json: JSONValue?) -> JSONValue? {
        guard case .array(let items)? = json else { return nil }
        return items.first
    }

    @Test func theUserListPagesBeyondAThousandWithTotalsLinksAndAFilter() async throws {
        let console = try await Console()
        var last: AuthUser?
        for n in 1...1001 {
            last = try await console.auth.adminCreateUser(.serviceRole, NewUser(email: String(format: "bulk-%04d@example.com", n), emailConfirmed: true))
        }
        let service = console.keys.serviceRoleKey
        let first = try await console.send("/auth/v1/admin/users?page=1&per_page=1000", key: service)
        guard case .array(let firstUsers)? = first.json?["users"] else { Issue.record("no users in \(first.text.prefix(300))"); return }
        #expect(firstUsers.count == 1000)
        #expect(first.header("X-Total-Count") == "1003")
        #expect(first.header("Link") == #"</auth/v1/admin/users?page=2&per_page=1000>; rel="next", </auth/v1/admin/users?page=2&per_page=1000>; rel="last""#)
        let second = try await console.send("/auth/v1/admin/users?page=2&per_page=1000", key: service)
        guard case .array(let secondUsers)? = second.json?["users"] else { Issue.record("no users in \(second.text.prefix(300))"); return }
        #expect(secondUsers.count == 3)
        // Oldest first: GoTrue's order, (created_at, id) — users made in the same instant of the clock (SQLite's
        // `now` has millisecond resolution) are ordered by id.
        func order(_ user: JSONValue) -> String {
            guard case .string(let created)? = user["created_at"], case .string(let id)? = user["id"] else { return "" }
            return created + "|" + id
        }
        let listed = (firstUsers + secondUsers).map(order)
        #expect(!listed.contains("") && listed == listed.sorted())
        #expect(second.header("Link") == #"</auth/v1/admin/users?page=2&per_page=1000>; rel="last""#)
        // Oldest first, no user twice, none missing across the pages.
        let ids = (firstUsers + secondUsers).compactMap { user -> String? in if case .string(let id)? = user["id"] { id } else { nil } }
        #expect(Set(ids).count == 1003)
        // GoTrue's filter: part of the email, case-insensitively, or the exact id; the total counts the matches.
        let filtered = try await console.send("/auth/v1/admin/users?filter=BULK-100&per_page=5", key: service)
        guard case .array(let matches)? = filtered.json?["users"] else { Issue.record("no users in \(filtered.text.prefix(300))"); return }
        #expect(Set(matches.compactMap { $0["email"] }) == Set((0...1).map { .string("bulk-100\($0)@example.com") }))
        #expect(matches.map(order) == matches.map(order).sorted())
        #expect(filtered.header("X-Total-Count") == "2")
        let byID = try await console.send("/auth/v1/admin/users?filter=\(try #require(last).id)", key: service)
        #expect(byID.header("X-Total-Count") == "1")
        let wildcard = try await console.send("/auth/v1/admin/users?filter=%25", key: service)
        #expect(wildcard.header("X-Total-Count") == "0", "a % is a character, not a wildcard")
        let refused = try await console.send("/auth/v1/admin/users?page=2", key: try await console.accessToken("user@example.com"))
        #expect(refused.status == .forbidden)
    }

    @Test func consoleSignInsAndRefusalsAreCounted() async throws {
        let console = try await Console(metrics: ServerMetrics())
        _ = try await console.consoleToken()
        _ = try await console.send("/admin/api/session", .post, key: nil, body: #"{"email":"user@example.com","password":"\#(Self.password)"}"#)
        _ = try await console.send("/admin/api/session", .post, key: nil, body: #"{"email":"admin@example.com","password":"wrong-password"}"#)
        let scrape = try await console.send("/metrics", key: console.keys.serviceRoleKey).text
        #expect(MetricsTests.value(scrape, "caravan_auth_sign_ins_total", [#"method="admin_console""#]) == 1)
        let route = #"route="/admin/api/session""#
        #expect(MetricsTests.value(scrape, "caravan_auth_failures_total", [route, #"kind="CARAVAN_NOT_ADMIN""#]) == 1)
        #expect(MetricsTests.value(scrape, "caravan_auth_failures_total", [route, #"kind="invalid_credentials""#]) == 1)
    }
}

import CaravanAuth
import CaravanCore
import CaravanTesting
import CaravanServer
import CaravanSQLite
import Foundation
import GRDB
import HTTPTypes
import HummingbirdTesting
import Places
import Synchronization
import Testing

/// An embedding read is one SQL statement, whatever it embeds (no N+1) — asserted on the statements the
/// SQLite adapter actually ran (GRDB's statement trace), not on the SQL text alone.
@Suite("Embedding runs one statement")
struct EmbeddingStatementLogTests {
    final class StatementLog: Sendable {
        private let statements = Mutex<[String]>([])
        func append(_ sql: String) { statements.withLock { $0.append(sql) } }
        func take() -> [String] { statements.withLock { all in defer { all = [] }; return all } }
    }

    /// The router deployment of `TestDeployment.make` on a SQLite store whose every connection reports its statements.
    static func deployment(log: StatementLog) async throws -> TestDeployment {
        let directory = NSTemporaryDirectory() + "caravan-statement-log-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let catalog = Catalog(modules: [SystemModule.module, PlacesModule.module])
        let store = try SQLiteStore(path: directory + "/caravan.sqlite", connectionSetup: [{ db in
            db.trace(options: .statement) { event in log.append(event.description) }
        }])
        _ = try await store.migrate(catalog.migrations)
        let access = catalog.access(for: .serviceRole)
        _ = try await PlacesImporter(pipeline: WritePipeline(store: store, publisher: ChangePublisher()), access: access)
            .run(try PlacesImporter.entries(of: try JSONParser.parse(TestDeployment.places)), dryRun: false)
        _ = try await store.transaction(access, rollback: false, grant: TransactionGrant()) { tx in
            let users = (1...3).map { "00000000-0000-4000-8000-00000000000\($0)" }
            _ = try await tx.insert(users.map { RowValues(["id": .text($0)]) }, into: SystemModule.users, conflict: nil)
            for place in ["kudu", "orchard", "cafe-nour"] {
                _ = try await tx.insert(users.map { RowValues(["user_id": .text($0), "place_id": .text(place), "rating": .integer(4)]) },
                                  into: PlacesSchema.reviews, conflict: nil)
            }
            return 0
        }
        let secret = try SigningSecret.loadOrCreate(in: directory, now: 1_700_000_000)
        let verifier = await TokenVerifier(secret: secret, now: { 1_800_000_000 })
        return TestDeployment(services: CaravanServices(store: store, catalog: catalog, verifier: verifier, publisher: ChangePublisher()),
                              keys: try await verifier.apiKeys(), secret: secret, configuration: ServerConfiguration())
    }

    /// The statements that read rows (not BEGIN/COMMIT/SAVEPOINT/PRAGMA, nor the `SELECT * FROM sqlite_master LIMIT 1`
    /// with which GRDB checks each connection it opens: the first read on a new reader connection runs it too).
    static func reads(_ statements: [String]) -> [String] {
        statements.filter { statement in
            let text = statement.uppercased()
            return (text.hasPrefix("SELECT") || text.hasPrefix("WITH")) && !text.contains("FROM SQLITE_MASTER")
        }
    }

    @Test func anEmbeddingReadIsOneStatementHoweverManyParentsItHas() async throws {
        let log = StatementLog()
        let d = try await Self.deployment(log: log)
        _ = log.take()
        let plain = try await d.get("/rest/v1/places?select=id&limit=20")
        #expect(plain.status == .ok)
        let plainReads = Self.reads(log.take())
        let embedded = try await d.get("/rest/v1/places?select=id,name_en,reviews(rating),delivery_prices(app_name),menu_prices(price)&limit=20")
        #expect(embedded.status == .ok, "\(embedded.text)")
        let places = try JSONParser.parse(embedded.text)
        guard case .array(let rows) = places else { Issue.record("not an array: \(embedded.text)"); return }
        #expect(rows.count == 5 && rows.contains { if case .array(let r)? = $0["reviews"] { r.count == 3 } else { false } })
        let embeddedReads = Self.reads(log.take())
        #expect(embeddedReads.count == plainReads.count, "\(embeddedReads)")
        #expect(embeddedReads.count == 1, "\(embeddedReads)")
    }
}

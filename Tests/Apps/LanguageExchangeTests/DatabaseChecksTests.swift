import CaravanCore
import CaravanTesting
import CaravanPostgres
import CaravanSQLite
import Foundation
import GRDB
@testable import LanguageExchange
import Testing

/// The frozen CHECKs themselves, written past the pipeline (whose in-memory validator answers first): raw SQL
/// inserts into the database prove that each engine counts a message's length in Unicode scalars, as the pipeline
/// does, and enforces the ordered pair. Test-only SQL.
@Suite("LanguageExchange checks inside each database")
struct DatabaseChecksTests {
    /// A raw insert of a message of `text` into the conversation of users 1 and 2; nil when the database refused it.
    typealias RawInsert = @Sendable (_ sql: String) async throws -> Bool

    static let arabic = MessageTests.arabic
    static let longest = String(repeating: arabic, count: 99) + String(repeating: "😀", count: 10)

    static func messageSQL(_ conversation: String, _ text: String) -> String {
        let quoted = text.replacingOccurrences(of: "'", with: "''")
        return """
            INSERT INTO "messages" ("conversation_id", "sender_id", "receiver_id", "original_text", "original_language") \
            VALUES ('\(conversation)', '\(F.uuid(1))', '\(F.uuid(2))', '\(quoted)', 'ar')
            """
    }

    static func check(_ f: F, insert: RawInsert) async throws {
        try await f.makeProfiles([F.profile(1), F.profile(2, native: "ar", learning: ["en"])])
        let conversation = try await MessageTests.matchedPair(f)
        #expect(try await insert(messageSQL(conversation, longest)), "1,000 scalars (1,010 UTF-16 units, fewer characters)")
        #expect(try await !insert(messageSQL(conversation, longest + "ً")), "1,001 scalars")
        #expect(try await !insert(messageSQL(conversation, "")), "empty")
        #expect(try await !insert(#"INSERT INTO "matches" ("user1_id", "user2_id") VALUES ('\#(F.uuid(2))', '\#(F.uuid(1))')"#), "unordered pair")
    }

    @Test func sqlite() async throws {
        let directory = NSTemporaryDirectory() + "caravan-lx-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/caravan.sqlite"
        let store = try SQLiteStore(path: path)
        _ = try await store.migrate(SystemModule.migrations + LanguageExchangeMigrations.all)
        let f = try await F(store: store)
        try await Self.check(f) { sql in
            let queue = try DatabaseQueue(path: path)
            do {
                try await queue.write { db in try db.execute(sql: sql) }
                return true
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                return false
            }
        }
    }

    @Test func postgres() async throws {
        let store = try await Engine.makePostgresStore(cloning: SystemModule.migrations + LanguageExchangeMigrations.all)
        _ = try await store.migrate(SystemModule.migrations + LanguageExchangeMigrations.all)
        let f = try await F(store: store)
        try await Self.check(f) { sql in
            do {
                _ = try await store.unsafeRows(sql)
                return true
            } catch {
                let text = String(reflecting: error)
                guard text.contains("23514") || text.contains("checkViolation") || text.contains("check constraint") else { throw error }
                return false
            }
        }
    }
}

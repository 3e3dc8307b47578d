import CaravanCore
import CaravanTesting
import CaravanSQLite
import Foundation
import GRDB
import Testing

/// The async storage port on SQLite: the transaction's body runs on GRDB's writer thread inside its synchronous
/// write closure, and an await on another executor comes back there, in the same transaction.
@Suite("Async transactions on SQLite")
struct SQLiteAsyncTransactionTests {
    static let notes = TableSchema("notes", columns: [Column("id", .integer, nullable: false), Column("body", .text)], primaryKey: ["id"])

    /// Work that runs on an executor of its own: awaiting it leaves the writer's thread.
    actor Elsewhere {
        func next(after n: Int64) -> Int64 { n + 1 }
    }

    static func note(_ id: Int64) -> RowValues { RowValues(["id": .integer(id), "body": .text("note \(id)")]) }

    @Test func aBodyThatAwaitsElsewhereGoesOnInItsOwnTransaction() async throws {
        let (store, directory) = try await makeTemporaryStore(migrations: [try renderedMigration("notes-0001", [Self.notes])])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let catalog = Catalog(modules: [SystemModule.module, AppModule(name: "notes", tables: [Self.notes], migrations: [])])
        let access = catalog.access(for: .serviceRole)
        let elsewhere = Elsewhere()
        let count = { try await store.unsafeRead { db in try Int.fetchOne(db, sql: #"SELECT count(*) FROM "notes""#) ?? -1 } }

        // Insert, hop to an actor and sleep, insert again: both rows and both change-log entries commit together.
        let (second, changes) = try await store.transaction(access, rollback: false, grant: TransactionGrant()) { transaction in
            _ = try await transaction.insert([Self.note(1)], into: Self.notes, conflict: nil)
            let second = await elsewhere.next(after: 1)
            try await Task.sleep(for: .milliseconds(5))
            _ = try await transaction.insert([Self.note(second)], into: Self.notes, conflict: nil)
            return second
        }
        #expect(second == 2)
        #expect(try await count() == 2)
        #expect(changes.map(\.primaryKey) == [#"{"id":1}"#, #"{"id":2}"#])
        #expect(Set(changes.map(\.transaction)).count == 1)

        // A failure after such a hop rolls back what the body wrote before it.
        await #expect(throws: CaravanError.self) {
            _ = try await store.transaction(access, rollback: false, grant: TransactionGrant()) { transaction in
                _ = try await transaction.insert([Self.note(3)], into: Self.notes, conflict: nil)
                _ = await elsewhere.next(after: 3)
                throw CaravanError(.raisedException, "rolled back on purpose")
            }
        }
        #expect(try await count() == 2)

        // A row refused inside its savepoint after a hop is rolled back alone; the batch goes on.
        let outcomes = try await store.transaction(access, rollback: false, grant: TransactionGrant()) { transaction in
            _ = await elsewhere.next(after: 4)
            return try await transaction.upsertEach([Self.note(5), RowValues(["id": .text("not a number")]), Self.note(6)],
                                                    into: Self.notes, conflictColumns: ["id"])
        }.0
        #expect(outcomes.map { if case .rejected = $0 { "rejected" } else { "stored" } } == ["stored", "rejected", "stored"])
        #expect(try await count() == 4)
    }
}

import CaravanCore
import CaravanTesting
import CaravanPostgres
import Testing

/// A write's change-log append is sent without waiting for its answer (it comes with the next statement's, at the
/// latest COMMIT's). An append that fails must still fail what it belongs to — with its own error, not the
/// "transaction aborted" of the statements after it — and leave nothing behind.
@Suite("Change-log appends sent without waiting, on PostgreSQL")
struct ChangeLogAppendTests {
    /// A store whose change log refuses entries for note 666 (a CHECK on the log, so only the append fails).
    static func storeRefusingNote666() async throws -> PostgresStore {
        let store = try await makeNotesStore(connections: 2)
        _ = try await store.unsafeRows(#"ALTER TABLE "caravan_changes" ADD CONSTRAINT "no_666" CHECK ("primary_key"::text NOT LIKE '%666%')"#)
        return store
    }

    static func storedNotes(_ store: PostgresStore) async throws -> [String?] {
        try await store.unsafeRows(#"SELECT "id"::text FROM "notes" ORDER BY "id""#).map { $0[0] }
    }

    static func loggedKeys(_ store: PostgresStore) async throws -> [String?] {
        try await store.unsafeRows(#"SELECT "primary_key"::text FROM "caravan_changes" WHERE "table_name" = 'notes' ORDER BY "seq""#).map { $0[0] }
    }

    @Test func aFailedAppendFailsTheCommitWithItsOwnErrorAndStoresNothing() async throws {
        let store = try await Self.storeRefusingNote666()
        // The last statement before COMMIT: the COMMIT's answer is a rollback.
        await #expect { try await store.insertNotes([note(1), note(666)]) } throws: { error in
            (error as? CaravanError)?.code == .checkViolation && (error as? CaravanError)?.message.contains("no_666") == true
        }
        // Followed by another write in the same transaction: that one fails as "aborted"; the append's error is reported.
        await #expect { try await store.insertNotes([note(666), note(2)]) } throws: { error in
            (error as? CaravanError)?.code == .checkViolation
        }
        #expect(try await Self.storedNotes(store).isEmpty)
        #expect(try await Self.loggedKeys(store).isEmpty)
        // The connections are usable afterwards, and a write's changes come back with their positions.
        let changes = try await store.insertNotes([note(3), note(4)])
        #expect(changes.map(\.primaryKey) == [#"{"id":3}"#, #"{"id":4}"#])
        #expect(changes[1].seq > changes[0].seq && changes[1].transaction == changes[0].seq)
        #expect(try await Self.storedNotes(store) == ["3", "4"])
        await store.shutdown()
    }

    @Test func aRowWhoseAppendFailsIsRejectedAloneInABatch() async throws {
        let store = try await Self.storeRefusingNote666()
        let (outcomes, changes) = try await store.transaction(catalog.access(for: .serviceRole), rollback: false, grant: TransactionGrant()) { transaction in
            try await transaction.upsertEach([note(1), note(666), note(2)], into: notes, conflictColumns: [])
        }
        #expect(outcomes.count == 3)
        if case .inserted = outcomes[0] {} else { Issue.record("row 1: \(outcomes[0])") }
        if case .rejected(let error) = outcomes[1] { #expect(error.code == .checkViolation) } else { Issue.record("row 666: \(outcomes[1])") }
        if case .inserted = outcomes[2] {} else { Issue.record("row 2: \(outcomes[2])") }
        #expect(try await Self.storedNotes(store) == ["1", "2"])
        #expect(changes.map(\.primaryKey) == [#"{"id":1}"#, #"{"id":2}"#])
        #expect(try await Self.loggedKeys(store) == changes.map(\.primaryKey))
        await store.shutdown()
    }
}

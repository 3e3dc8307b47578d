@testable import CaravanClient
import CaravanCore
import Foundation
import Places
import Testing

struct Fixture {
    static func store(caches: [CacheRule] = []) throws -> LocalStore {
        let directory = NSTemporaryDirectory() + "caravan-client-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try LocalStore(path: directory + "/client.sqlite", tables: PlacesModule.module.tables.filter(\.isSynced), caches: caches)
    }

    static let now = "2026-11-24T10:00:00.000000Z"
    static let user = "aaaaaaaa-0000-4000-8000-00000000000a"

    static func favorite(_ place: String, note: String = "x") -> JSONValue {
        .object([("user_id", .string(user)), ("place_id", .string(place)), ("note", .string(note))])
    }

    struct Stop: Error {}
}

@Suite("Local store and outbox")
struct LocalStoreTests {
    @Test func aLocalWriteAndItsOutboxEntryCommitTogether() throws {
        let store = try Fixture.store()
        let row = try store.insert("favorites", Fixture.favorite("p1"), now: Fixture.now)
        guard case .string(let id)? = row["id"] else { Issue.record("no generated id"); return }
        #expect(ColumnType.canonicalUUID(id) == id, "a uuid key is generated locally, so the row has its final key offline")
        #expect(row["created_at"] == .string(Fixture.now), "defaults fill the local row")
        let outbox = try store.outbox()
        #expect(outbox.count == 1 && outbox[0].operation == "insert" && outbox[0].state == .pending)
        #expect(outbox[0].record?["created_at"] == .string(Fixture.now), "the time of the write, taken on the device, is sent")
        guard case .object(let sent)? = outbox[0].record else { Issue.record("no record queued"); return }
        #expect(Set(sent.map(\.key)) == ["user_id", "place_id", "note", "id", "created_at"], "what the app wrote, the key and the time")
        #expect(outbox[0].record?["id"] == .string(id))

        // A failure before commit leaves neither the row nor its outbox entry.
        #expect(throws: (any Error).self) {
            // The update ran; the hook stands in for a crash before the commit.
            try store.update("favorites", key: .object([("id", .string(id))]), .object([("note", .string("y"))]), now: Fixture.now) {
                throw Fixture.Stop()
            }
        }
        #expect(try store.rows("favorites").first?["note"] == .string("x"))
        #expect(try store.outbox().count == 1)
    }

    @Test func theFileIsReadableByItsOwnerOnly() throws {
        let store = try Fixture.store()
        let attributes = try FileManager.default.attributesOfItem(atPath: store.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        try store.saveSession(ClientSession(accessToken: "a", refreshToken: "r", expiresAt: 1, userID: Fixture.user))
        #expect(try store.session()?.refreshToken == "r")
    }

    @Test func badWritesAreRefusedWithoutTouchingTheStore() throws {
        let store = try Fixture.store()
        #expect(throws: ClientError.self) { try store.insert("favorites", .object([("nope", .integer(1))]), now: Fixture.now) }
        #expect(throws: ClientError.self) { try store.insert("no_table", .object([]), now: Fixture.now) }
        #expect(throws: ClientError.self) { try store.insert("places", .object([("name_ar", .string("x"))]), now: Fixture.now) }
        #expect(throws: ClientError.self) { try store.update("favorites", key: .object([("id", .string("x"))]), .object([("note", .null)]), now: Fixture.now) }
        #expect(try store.outbox().isEmpty)
    }

    @Test func aWriteBreakingADeclaredRuleIsRefusedAtOnceWithItsCode() throws {
        let store = try Fixture.store()
        let place: JSONValue = .object([("id", .string("p1")), ("name_ar", .string("مكان")), ("category", .string("cafe")), ("category_ar", .string("مقهى"))])
        try store.insert("places", place, now: Fixture.now)
        let cases: [(String, JSONValue, CaravanError.Code)] = [
            ("favorites", .object([("user_id", .string(Fixture.user)), ("place_id", .null)]), .notNullViolation),
            ("favorites", .object([("user_id", .string("not-a-uuid")), ("place_id", .string("p1"))]), .invalidValue),
            ("places", .object([("id", .string("p2")), ("name_ar", .string("x")), ("category", .string("c")), ("category_ar", .string("c")),
                                ("google_rating", .double(7))]), .checkViolation),
            ("places", .object([("id", .string("p3")), ("name_ar", .string("x")), ("category", .string("c")), ("category_ar", .string("c")),
                                ("is_new", .string("maybe"))]), .invalidValue),
        ]
        for (table, record, code) in cases {
            let error = #expect(throws: ClientError.self) { try store.insert(table, record, now: Fixture.now) }
            #expect(error?.code == code.description, "\(record.jsonText)")
        }
        let update = #expect(throws: ClientError.self) {
            try store.update("places", key: .object([("id", .string("p1"))]), .object([("price_range", .string("cheap"))]), now: Fixture.now)
        }
        #expect(update?.code == CaravanError.Code.checkViolation.description)
        #expect(try store.outbox().count == 1, "only the valid place was queued")
        #expect(try store.rows("places").count == 1)
    }

    @Test func observationsSeeEveryCommittedChange() async throws {
        let store = try Fixture.store()
        var seen: [Int] = []
        let observation = try store.observe("favorites")
        for try await rows in observation {
            seen.append(rows.count)
            if rows.count == 2 { break }
            try store.insert("favorites", Fixture.favorite("p\(rows.count)"), now: Fixture.now)
        }
        #expect(seen == [0, 1, 2])
    }
}

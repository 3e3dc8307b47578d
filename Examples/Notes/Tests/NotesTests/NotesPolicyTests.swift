import CaravanCore
import CaravanTesting
import Notes
import Testing

/// The notes app's policy and RPC, tested as an app author tests their own module: the testing kit's fixture on
/// both engines (PostgreSQL when `CARAVAN_TEST_DATABASE_URL` names a cluster) and its policy-matrix runner.
@Suite struct NotesPolicyTests {
    enum Actor: CaseIterable, Sendable {
        case owner, otherUser, anon, service

        var identity: Identity {
            switch self {
            case .owner: Identity(role: .authenticated, userID: AppFixture.uuid(1))
            case .otherUser: Identity(role: .authenticated, userID: AppFixture.uuid(2))
            case .anon: Identity(role: .anon)
            case .service: .serviceRole
            }
        }
    }

    /// Two notes of user 1 (one pinned) and one of user 2.
    static func seeded(_ engine: Engine) async throws -> AppFixture {
        let f = try await AppFixture(engine: engine, modules: [NotesModule.module])
        for (owner, title, pinned) in [(1, "buy dates", false), (1, "call home", true), (2, "secret", false)] {
            _ = try await f.asUser(AppFixture.uuid(owner)) { tx in
                try await tx.insert([RowValues(["owner": .text(AppFixture.uuid(owner)), "title": .text(title), "pinned": .bool(pinned)])],
                                    into: NotesModule.notes, conflict: nil)
            }
        }
        return f
    }

    @Test(arguments: Engine.allCases)
    func eachUserReadsAndWritesOnlyTheirOwnNotes(engine: Engine) async throws {
        let f = try await Self.seeded(engine)
        let matrix = PolicyMatrix(fixture: f) { (actor: Actor) in actor.identity }
        #expect(try await matrix.readMismatches(NotesModule.module.tables, expected: [
            "notes": [.owner: 2, .otherUser: 1, .anon: 0, .service: 3],
        ]) == [])
        #expect(await matrix.writeMismatches("pin every note", expected: [.owner: .rows(2), .otherUser: .rows(1), .anon: .rows(0), .service: .rows(3)]) { tx in
            try await tx.update(NotesModule.notes, set: RowValues(["pinned": .bool(true)]), where: .constant(true))
        } == [])
        #expect(await matrix.writeMismatches("write a note in user 1's name", expected: [
            .owner: .rows(1), .otherUser: .refused(.permissionDenied), .anon: .refused(.permissionDenied), .service: .rows(1),
        ]) { tx in
            try await tx.insert([RowValues(["owner": .text(AppFixture.uuid(1)), "title": .text("planted")])], into: NotesModule.notes, conflict: nil)
        } == [])
    }

    @Test(arguments: Engine.allCases)
    func countNotesCountsTheCallersNotesOnly(engine: Engine) async throws {
        let f = try await Self.seeded(engine)
        func countNotes(as user: Int, _ arguments: [String: JSONValue] = [:]) async throws -> Int64? {
            guard case .scalar(.integer(let count)) = try await f.call("count_notes", as: AppFixture.uuid(user), arguments) else { return nil }
            return count
        }
        #expect(try await countNotes(as: 1) == 2)
        #expect(try await countNotes(as: 1, ["only_pinned": .bool(true)]) == 1)
        #expect(try await countNotes(as: 2) == 1)
    }

    @Test(arguments: Engine.allCases)
    func aBlankTitleIsRefusedNamingTheCheck(engine: Engine) async throws {
        let f = try await AppFixture(engine: engine, modules: [NotesModule.module])
        await expectFailure(.checkViolation, naming: "notes_title_not_blank") {
            _ = try await f.asUser(AppFixture.uuid(1)) { tx in
                try await tx.insert([RowValues(["owner": .text(AppFixture.uuid(1)), "title": .text("")])], into: NotesModule.notes, conflict: nil)
            }
        }
    }

    @Test(arguments: Engine.allCases)
    func theSummaryFunctionCountsTheCallersNotesOnly(engine: Engine) async throws {
        let f = try await Self.seeded(engine)
        let answer = try await f.invoke("notes-summary", as: AppFixture.uuid(1), body: .object([("name", .string("Sara"))]))
        #expect(answer.status == 200)
        #expect(try JSONParser.parse(bytes: answer.body) == .object([("greeting", .string("Hello Sara")), ("notes", .integer(2)), ("pinned", .integer(1))]))
        let other = try await f.invoke("notes-summary", as: AppFixture.uuid(2))
        #expect(try JSONParser.parse(bytes: other.body)["notes"] == .integer(1))
    }
}

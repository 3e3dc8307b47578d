import CaravanCore
import CaravanTesting
import CaravanSQLite
import CaravanTesting
import Foundation
import Places
import Testing

/// A small deterministic generator (SplitMix64), so a failing seed can be replayed.
typealias SeededGenerator = SplitMix64

@Suite("Policies: SQL agrees with the in-memory evaluator")
struct PolicyEvaluationTests {
    static let userA = "aaaaaaaa-0000-4000-8000-00000000000a"
    static let userB = "bbbbbbbb-0000-4000-8000-00000000000b"
    static let catalog = Catalog(modules: [SystemModule.module, PlacesModule.module])
    static let categories = ["cafe", "restaurant", "park", "hotel"]

    /// 120 places (some inactive, some without English names) and favorites of two users.
    static func seededStore(_ engine: Engine, seed: UInt64) async throws -> any Store {
        var random = SeededGenerator(state: seed)
        let store = try await engine.makeStore(migrations: catalog.migrations)
        let places: [RowValues] = (0..<120).map { i in
            RowValues([
                "id": .text(String(format: "p%03d", i)),
                "name_ar": .text("مكان \(i)"),
                "name_en": Bool.random(using: &random) ? .text("Place \(i)") : .null,
                "category": .text(categories.randomElement(using: &random)!),
                "category_ar": .text("x"),
                "google_rating": .double(Double(Int.random(in: 0...50, using: &random)) / 10),
                "is_active": .bool(Int.random(in: 0..<4, using: &random) != 0),
                "tags": ColumnType.textArray(Array(["quiet", "family", "wifi"].shuffled(using: &random).prefix(Int.random(in: 0...2, using: &random)))),
            ])
        }
        let favorites: [RowValues] = (0..<60).map { i in
            RowValues(["user_id": .text(i % 3 == 0 ? userB : userA), "place_id": .text(String(format: "p%03d", i * 2)), "note": i % 4 == 0 ? .text("n\(i)") : .null])
        }
        _ = try await store.transaction(catalog.access(for: .serviceRole), rollback: false, grant: TransactionGrant()) { tx in
            _ = try await tx.insert([RowValues(["id": .text(userA)]), RowValues(["id": .text(userB)])], into: SystemModule.users, conflict: nil)
            _ = try await tx.insert(places, into: PlacesSchema.places, conflict: nil)
            _ = try await tx.insert(favorites, into: PlacesSchema.favorites, conflict: nil)
            return 0
        }
        return store
    }

    static func randomFilter(_ table: TableSchema, using random: inout SeededGenerator) -> String {
        switch table.name {
        case "places":
            let options = [
                "category=eq.\(categories.randomElement(using: &random)!)",
                "google_rating=gte.\(Double(Int.random(in: 0...50, using: &random)) / 10)",
                "name_en=is.null", "name_en=ilike.*\(Int.random(in: 1...9, using: &random))*",
                "is_active=is.false", "is_active=eq.true", "tags=cs.{quiet}", "tags=ov.{wifi,family}",
                "or=(category.eq.cafe,google_rating.lt.\(Int.random(in: 1...5, using: &random)))",
                "id=in.(p001,p002,p003,p010,p011,p050)", "not.and=(is_active.is.true,category.eq.park)",
            ]
            return (0..<Int.random(in: 1...3, using: &random)).map { _ in options.randomElement(using: &random)! }.joined(separator: "&")
        default:
            let options = [
                "user_id=eq.\(userB)", "user_id=eq.\(userA.uppercased())", "note=is.null", "place_id=like.p0*",
                "or=(user_id.eq.\(userB),note.not.is.null)", "place_id=gte.p050",
            ]
            return (0..<Int.random(in: 1...2, using: &random)).map { _ in options.randomElement(using: &random)! }.joined(separator: "&")
        }
    }

    /// Many random filtered reads as user A: SQL never returns a row the in-memory policy + filter would not.
    @Test(arguments: Engine.allCases, [UInt64(1), 2, 3])
    func randomReadsAsUserAReturnExactlyWhatTheEvaluatorAdmits(engine: Engine, seed: UInt64) async throws {
        let store = try await Self.seededStore(engine, seed: seed)
        var random = SeededGenerator(state: seed &* 7919)
        let identity = Identity(role: .authenticated, userID: Self.userA, claims: .object([("sub", .string(Self.userA))]))
        let access = Self.catalog.access(for: identity)
        for table in [PlacesSchema.places, PlacesSchema.favorites] {
            let everything = try await store.fetch(try ReadPlan(table: table, query: Query(), access: .constant(true), maxRows: nil, includeCount: false))
            let rule = try access.readRule(table)
            for _ in 0..<40 {
                let filter = Self.randomFilter(table, using: &random)
                let plan = try ReadPlan(table: table, query: try QueryParser.parseRead(QueryString(filter)), access: rule, maxRows: nil, includeCount: true)
                let result = try await store.fetch(plan)
                let expected = everything.rows.filter { row in
                    let lookup = { (name: String) in table.position(of: name).map { row[$0] } ?? .null }
                    return plan.filter.evaluate(lookup) == true
                }.map { $0[0] }
                #expect(result.rows.map { $0[0] } == expected, "seed \(seed) \(table.name)?\(filter)")
                #expect(result.totalCount == expected.count)
                if table.name == "favorites" {
                    #expect(result.rows.allSatisfy { $0[table.position(of: "user_id")!] == .text(Self.userA) })
                }
            }
        }
    }

    /// Membership through a subquery ("members of the group"), compiled to SQL and evaluated in memory.
    @Test(arguments: Engine.allCases)
    func membershipPolicyThroughASubquery(engine: Engine) async throws {
        let groups = TableSchema("groups", columns: [Column("id", .integer, nullable: false), Column("name", .text)], primaryKey: ["id"])
        let members = TableSchema("members", columns: [Column("group_id", .integer, nullable: false), Column("user_id", .uuid, nullable: false)],
                                  primaryKey: ["group_id", "user_id"])
        let policy = TablePolicy("groups_members_read", for: [.select], to: [.authenticated],
                                 using: .exists(table: "members", where: [.matchesOuter(inner: "group_id", outer: "id"), .equals(inner: "user_id", .authUID)]))
        let module = AppModule(name: "groups", tables: [groups, members], migrations: [try renderedMigration("groups", [groups, members])],
                               policies: ["groups": [policy]])
        let catalog = Catalog(modules: [module])
        let store = try await engine.makeStore(migrations: catalog.migrations)
        let memberRows = [(1, Self.userA), (2, Self.userB), (3, Self.userA), (3, Self.userB)]
        _ = try await store.transaction(catalog.access(for: .serviceRole), rollback: false, grant: TransactionGrant()) { tx in
            _ = try await tx.insert((1...4).map { RowValues(["id": .integer(Int64($0)), "name": .text("g\($0)")]) }, into: groups, conflict: nil)
            _ = try await tx.insert(memberRows.map { RowValues(["group_id": .integer(Int64($0.0)), "user_id": .text($0.1)]) }, into: members, conflict: nil)
            return 0
        }
        for (user, expected) in [(Self.userA, [1, 3]), (Self.userB, [2, 3]), ("cccccccc-0000-4000-8000-00000000000c", [])] {
            let access = catalog.access(for: Identity(role: .authenticated, userID: user))
            let rule = try access.readRule(groups)
            let result = try await store.fetch(try ReadPlan(table: groups, query: Query(), access: rule, maxRows: nil, includeCount: false))
            #expect(result.rows.map { $0[0] } == expected.map { .integer(Int64($0)) }, "user \(user)")
            // The evaluator, answering EXISTS from the member rows, agrees.
            let inMemory = (1...4).filter { id in
                rule.evaluate({ $0 == "id" ? .integer(Int64(id)) : .null }, subquery: { _, inner in
                    memberRows.contains { row in inner.evaluate { $0 == "group_id" ? .integer(Int64(row.0)) : .text(row.1) } == true }
                }) == true
            }
            #expect(inMemory == expected)
        }
        #expect(try await store.fetch(try ReadPlan(table: groups, query: Query(), access: try catalog.access(for: Identity(role: .anon)).readRule(groups),
                                                   maxRows: nil, includeCount: false)).rows.isEmpty)
    }
}

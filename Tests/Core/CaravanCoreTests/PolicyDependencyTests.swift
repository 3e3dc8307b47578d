import CaravanCore
import Testing

/// The analysis sync pulls and realtime use to find visibility changes: which tables a select rule reads, how their
/// rows link to the guarded rows, and which direction a change moves them.
@Suite("Policy dependencies")
struct PolicyDependencyTests {
    static let members = TableSchema("members", columns: [Column("group_id", .uuid, nullable: false), Column("user_id", .uuid, nullable: false),
                                                         Column("role", .text)], primaryKey: ["group_id", "user_id"])
    static let blocks = TableSchema("blocks", columns: [Column("blocker_id", .uuid, nullable: false), Column("blocked_id", .uuid, nullable: false)],
                                    primaryKey: ["blocker_id", "blocked_id"])
    static let items = TableSchema("items", columns: [Column("id", .uuid, nullable: false), Column("group_id", .uuid), Column("owner_id", .uuid),
                                                     Column("a_id", .uuid), Column("b_id", .uuid)], primaryKey: ["id"])
    static let catalogModule = AppModule(name: "deps", tables: [members, blocks, items], migrations: [])
    static let catalog = Catalog(modules: [catalogModule])
    static let me = "00000000-0000-4000-8000-000000000001"
    static let other = "00000000-0000-4000-8000-000000000002"
    static let group = "00000000-0000-4000-8000-0000000000a1"
    static let identity = Identity(role: .authenticated, userID: me)

    static func bound(_ rule: PolicyRule) throws -> BoundPredicate {
        try rule.resolve(for: identity, table: items, catalog: catalog)
    }

    static let memberOfGroup = PolicyRule.exists(table: "members", where: [.matchesOuter(inner: "group_id", outer: "group_id"), .equals(inner: "user_id", .authUID)])
    static func notBlocked(_ a: String, _ b: String) -> PolicyRule {
        .not(.exists(table: "blocks", where: [.matchesOuter(inner: "blocker_id", outer: a), .matchesOuter(inner: "blocked_id", outer: b)]))
    }

    static func row(_ pairs: [String: Value]) -> (String) -> Value { { pairs[$0] ?? .null } }

    @Test("a direct membership: linked by group_id, the caller's id a local condition, rows move in when a membership appears")
    func direct() throws {
        let dependencies = PolicyDependency.of(try Self.bound(Self.memberOfGroup))
        let dependency = try #require(dependencies.first)
        #expect(dependencies.count == 1)
        #expect(dependency.table.name == "members" && dependency.narrowed && dependency.polarity == .reveals)
        #expect(dependency.links.map(\.outer.name) == ["group_id"] && dependency.links.map(\.inner.name) == ["group_id"])
        let mine = Self.row(["group_id": .text(Self.group), "user_id": .text(Self.me)])
        let joined = dependency.slices(old: nil, new: mine)
        #expect(joined == [MoveSlice(fixed: [.init(column: "group_id", value: .text(Self.group))], movesOut: false)])
        let left = dependency.slices(old: mine, new: nil)
        #expect(left == [MoveSlice(fixed: [.init(column: "group_id", value: .text(Self.group))], movesOut: true)])
        // Someone else's membership does not concern me; an update that keeps me in the group moves nothing.
        #expect(dependency.slices(old: nil, new: Self.row(["group_id": .text(Self.group), "user_id": .text(Self.other)])).isEmpty)
        let promoted = Self.row(["group_id": .text(Self.group), "user_id": .text(Self.me), "role": .text("admin")])
        #expect(dependency.slices(old: mine, new: promoted).isEmpty)
    }

    @Test("nested in and/or: an owner-or-member rule depends on the membership; the owner branch keeps rows possible")
    func ownerOrMember() throws {
        let rule = try Self.bound(.or([.ownedBy("owner_id"), .and([.compare(.column("a_id"), .eq, .literal(.text(Self.other))), Self.memberOfGroup])]))
        let dependencies = PolicyDependency.of(rule)
        #expect(dependencies.map(\.table.name) == ["members"])
        // Rows of the group could be mine (owner unknown): the slice must be read.
        #expect(rule.couldHold(fixing: ["group_id": .text(Self.group)]))
        // A rule that fixes the owner to someone else and a_id to a third user can never hold.
        let strict = try Self.bound(.and([.ownedBy("owner_id"), Self.memberOfGroup]))
        #expect(!strict.couldHold(fixing: ["owner_id": .text(Self.other), "group_id": .text(Self.group)]))
        #expect(strict.couldHold(fixing: ["owner_id": .text(Self.me), "group_id": .text(Self.group)]))
    }

    @Test("not exists, as blocks use it: two links, hiding; a new block moves rows out, a removed one moves them in")
    func blocks() throws {
        let rule = try Self.bound(.and([.or([.ownedBy("a_id"), .ownedBy("b_id")]), Self.notBlocked("a_id", "b_id"), Self.notBlocked("b_id", "a_id")]))
        let dependencies = PolicyDependency.of(rule)
        #expect(dependencies.count == 2)
        #expect(dependencies.allSatisfy { $0.table.name == "blocks" && $0.polarity == .hides && $0.links.count == 2 })
        let block = Self.row(["blocker_id": .text(Self.me), "blocked_id": .text(Self.other)])
        let first = try #require(dependencies.first)
        let added = first.slices(old: nil, new: block)
        #expect(added.count == 1 && added[0].movesOut)
        #expect(Set(added[0].fixed.map(\.column)) == ["a_id", "b_id"])
        let removed = first.slices(old: block, new: nil)
        #expect(removed.count == 1 && !removed[0].movesOut)
        // A caller who is neither user of the pair can never see its rows: nothing to read for them.
        let stranger = try PolicyRule.and([.or([.ownedBy("a_id"), .ownedBy("b_id")]), Self.notBlocked("a_id", "b_id")])
            .resolve(for: Identity(role: .authenticated, userID: "00000000-0000-4000-8000-000000000009"), table: Self.items, catalog: Self.catalog)
        #expect(!stranger.couldHold(fixing: ["a_id": .text(Self.me), "b_id": .text(Self.other)]))
    }

    @Test("the same subquery under exists and not exists moves both ways")
    func bothPolarities() throws {
        let rule = try Self.bound(.or([Self.memberOfGroup, .and([.ownedBy("owner_id"), .not(Self.memberOfGroup)])]))
        let dependencies = PolicyDependency.of(rule)
        #expect(dependencies.count == 1 && dependencies[0].polarity == .both)
        let joined = dependencies[0].slices(old: nil, new: Self.row(["group_id": .text(Self.group), "user_id": .text(Self.me)]))
        #expect(joined.count == 1 && joined[0].movesOut)
    }

    @Test("a subquery linked by something other than column equality concerns the whole table")
    func unnarrowed() throws {
        let inner = try Self.members.requireColumn("group_id")
        let outer = Column("group_id", .uuid, nullable: true, qualifier: "items")
        let owner = Column("owner_id", .uuid, nullable: true, qualifier: "items")
        let rule = BoundPredicate.exists(Self.members, .and([.or([.compareColumns(inner, .eq, outer), .compareColumns(inner, .eq, owner)]),
                                                             .compare(try Self.members.requireColumn("user_id"), .eq, .text(Self.me))]))
        let dependency = try #require(PolicyDependency.of(rule).first)
        #expect(!dependency.narrowed && dependency.links.isEmpty)
        let slices = dependency.slices(old: nil, new: Self.row(["group_id": .text(Self.group), "user_id": .text(Self.me)]))
        #expect(slices == [MoveSlice(fixed: [], movesOut: false)])
        // The caller's id still narrows who is concerned.
        #expect(dependency.slices(old: nil, new: Self.row(["group_id": .text(Self.group), "user_id": .text(Self.other)])).isEmpty)
    }

    @Test("an IN subquery links the guarded column to the selected one")
    func inSubquery() throws {
        let rule = BoundPredicate.inSubquery(try Self.items.requireColumn("group_id"), Self.members, selecting: try Self.members.requireColumn("group_id"),
                                             where: .compare(try Self.members.requireColumn("user_id"), .eq, .text(Self.me)))
        let dependency = try #require(PolicyDependency.of(rule).first)
        #expect(dependency.narrowed && dependency.links.map(\.outer.name) == ["group_id"])
        let slices = dependency.slices(old: Self.row(["group_id": .text(Self.group), "user_id": .text(Self.me)]), new: nil)
        #expect(slices == [MoveSlice(fixed: [.init(column: "group_id", value: .text(Self.group))], movesOut: true)])
    }

    @Test("a rule on the row's own columns depends on nothing; a NULL link concerns no row")
    func ownColumnsAndNullLinks() throws {
        #expect(PolicyDependency.of(try Self.bound(.ownedBy("owner_id"))).isEmpty)
        let dependency = try #require(PolicyDependency.of(try Self.bound(Self.memberOfGroup)).first)
        #expect(dependency.slices(old: nil, new: Self.row(["user_id": .text(Self.me)])).isEmpty)
    }
}

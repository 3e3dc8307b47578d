import CaravanCore
import CaravanServer
import Testing

/// The admin console's policy view: each policy expression reads as SQL-like text.
@Suite struct PolicyTextTests {
    @Test func anOwnerRuleReadsAsAComparisonWithTheCaller() {
        #expect(PolicyText.render(.ownedBy("user_id")) == "user_id = auth.uid()")
    }

    @Test func andInsideOrKeepsItsGrouping() {
        let rule = PolicyRule.or([
            .compare(.column("is_public"), .eq, .literal(.bool(true))),
            .and([.ownedBy("owner_id"), .not(.isNull(.column("published_at")))]),
        ])
        #expect(PolicyText.render(rule) == "is_public = true or (owner_id = auth.uid() and published_at is not null)")
    }

    @Test func membershipReadsAsARowThatExists() {
        let rule = PolicyRule.exists(table: "group_members", where: [.matchesOuter(inner: "group_id", outer: "group_id"), .equals(inner: "user_id", .authUID)])
        #expect(PolicyText.render(rule) == "exists a row in group_members where group_members.group_id = group_id and group_members.user_id = auth.uid()")
    }

    @Test func literalsClaimsAndListsUseSQLSpelling() {
        #expect(PolicyText.render(.isIn(.column("status"), [.literal(.text("open")), .literal(.text("it's")), .literal(.integer(3))]))
                == "status in ('open', 'it''s', 3)")
        #expect(PolicyText.render(.compare(.claim(["app_metadata", "role"]), .eq, .literal(.text("admin"))))
                == "auth.jwt() -> 'app_metadata' ->> 'role' = 'admin'")
        #expect(PolicyText.render(.compare(.role, .neq, .literal(.text("anon")))) == "auth.role() <> 'anon'")
        #expect(PolicyText.render(.always(true)) == "true")
        #expect(PolicyText.render(.not(.compare(.column("a"), .lt, .literal(.null)))) == "not (a < null)")
    }
}

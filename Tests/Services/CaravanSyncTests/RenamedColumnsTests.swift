import CaravanCore
import CaravanSync
import Testing

/// The old names a renamed column answers to in sync (the device side is `SchemaUpgradeTests`, against a served host).
@Suite struct RenamedColumnsTests {
    let trips = TableSchema("trips", columns: [
        Column("id", .uuid, nullable: false),
        Column("title", .text, nullable: false, renamedFrom: "name"),
        Column("note", .text),
    ], primaryKey: ["id"])

    @Test func pushedOldNamesReachTheRenamedColumn() {
        let renamed = RenamedColumns(trips)
        #expect(renamed.current(.object([("id", .string("a")), ("name", .string("Lisbon"))]))
                == .object([("id", .string("a")), ("title", .string("Lisbon"))]))
        // Both names sent: the new name wins.
        #expect(renamed.current(.object([("name", .string("old")), ("title", .string("new"))])) == .object([("title", .string("new"))]))
        #expect(renamed.current(.object([("note", .null)])) == .object([("note", .null)]))
    }

    @Test func pulledRecordsCarryBothNames() {
        let renamed = RenamedColumns(trips)
        #expect(renamed.bothNames(.object([("id", .string("a")), ("title", .string("Lisboa"))]))
                == .object([("id", .string("a")), ("title", .string("Lisboa")), ("name", .string("Lisboa"))]))
        // Logged before the rename: the old name, and the new one added.
        #expect(renamed.bothNames(.object([("name", .string("Lisbon"))])) == .object([("name", .string("Lisbon")), ("title", .string("Lisbon"))]))
    }

    @Test func aTableWithoutRenamesIsLeftAlone() {
        let plain = TableSchema("notes", columns: [Column("id", .uuid, nullable: false), Column("name", .text)], primaryKey: ["id"])
        #expect(RenamedColumns(plain).isEmpty)
        // A renamedFrom naming a column the table still has (expand: both kept) is no alias.
        let both = TableSchema("t", columns: [Column("id", .uuid), Column("name", .text), Column("title", .text, renamedFrom: "name")], primaryKey: ["id"])
        #expect(RenamedColumns(both).isEmpty)
    }
}

public import CaravanCore

/// Test support shipped next to the code: schema fixtures shared by the test targets of every layer.
public enum Fixtures {
    /// A table with one column of every `ColumnType`.
    public static let everyType = TableSchema(
        "things",
        columns: [
            Column("id", .integer, nullable: false),
            Column("key", .uuid),
            Column("name", .text),
            Column("score", .double),
            Column("price", .decimal(precision: 6, scale: 2)),
            Column("flag", .boolean),
            Column("at", .timestamp),
            Column("day", .date),
            Column("doc", .json),
            Column("tags", .textArray),
        ],
        primaryKey: ["id"]
    )
}

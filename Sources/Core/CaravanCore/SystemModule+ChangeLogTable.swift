extension SystemModule {
    /// The change log (`caravan_changes`, migration system-0002) described as a table, so tools can read and copy it
    /// through the storage port like any other table. It is not part of `module.tables`: only the write pipeline
    /// appends to it, and REST never reaches it.
    public static let changeLog = TableSchema(
        "caravan_changes",
        columns: [
            Column("seq", .integer, nullable: false),
            Column("table_name", .text, nullable: false),
            Column("primary_key", .json, nullable: false),
            Column("op", .text, nullable: false),
            Column("record", .json),
            Column("old_record", .json),
            Column("committed_at", .timestamp, nullable: false),
            Column("actor", .text, nullable: false),
            // system-0005
            Column("tx_id", .integer),
        ],
        primaryKey: ["seq"],
        exposure: .secret
    )
}

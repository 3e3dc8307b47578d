/// Realtime Authorization, as Supabase has it: a channel joined with `config.private: true` is read and written only
/// as the policies an app module declares on this virtual table admit — Supabase's RLS on `realtime.messages`.
///
/// A policy sees one row per question: `topic` is the channel's name (`room:1` for the topic `realtime:room:1`, what
/// Supabase's `realtime.topic()` returns) and `extension` is `broadcast` or `presence`. A `select` policy decides who
/// receives a private channel's broadcasts (or its presence) and may join it at all; an `insert` policy decides who
/// may send broadcasts (or track presence) on it. Membership tables are reached as in any policy, through
/// `PolicyRule.exists`:
///
/// ```swift
/// policies: [RealtimeMessages.table: [
///     TablePolicy("members read their room", for: [.select], to: [.authenticated],
///                 using: .exists(table: "room_members", where: [.matchesOuter(inner: "room", outer: "topic"),
///                                                                .equals(inner: "user_id", .authUID)])),
/// ]]
/// ```
///
/// No policy means nobody but the service role joins a private channel. Public channels are not affected, and a
/// private and a public channel of the same name never see each other's messages.
public enum RealtimeMessages {
    /// The name policies are declared under.
    public static let table = "realtime.messages"

    /// What a policy is asked about.
    public enum Extension: String, Sendable, CaseIterable {
        case broadcast, presence
    }

    /// The virtual table's declaration (never created in a database).
    public static let schema = TableSchema(table, columns: [Column("topic", .text, nullable: false), Column("extension", .text, nullable: false)],
                                           primaryKey: [], exposure: .internal)

    /// The row a policy judges: the channel name and the extension.
    public static func row(channel: String, extension kind: Extension) -> (String) -> Value {
        { column in
            switch column {
            case "topic": .text(channel)
            case "extension": .text(kind.rawValue)
            default: .null
            }
        }
    }
}

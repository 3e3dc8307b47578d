package import CaravanCore

/// Answers the `EXISTS` membership subqueries of select policies (a policy that looks at another table).
///
/// The server implements it with a read through the `Store`. What it sees: the database at delivery time, which is
/// the commit state of the change being delivered or later — the hub reads the log in `seq` order right after each
/// commit, so a later transaction can only have committed in between under concurrent writes. A DELETE is judged
/// on the state after the delete (the log keeps the deleted row, not the other tables' rows as they were).
package protocol MembershipReader: Sendable {
    /// Whether any row of `table` matches `predicate` (which names `table`'s columns only).
    func exists(in table: TableSchema, where predicate: BoundPredicate) async throws -> Bool

    /// The reader for one round of questions (one delivery, one join): it sees at least every commit made before
    /// this call — on a server with read replicas, a replica that has replayed the primary's position as of now.
    func forRound() async -> any MembershipReader
}

extension MembershipReader {
    package func forRound() async -> any MembershipReader { self }
}

/// A membership question: the subquery's table and predicate with the outer row's values substituted.
struct MembershipKey: Hashable, Sendable {
    let table: String
    let predicate: BoundPredicate
}

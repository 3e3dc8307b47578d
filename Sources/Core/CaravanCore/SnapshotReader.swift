/// Reads through the storage port inside one snapshot: every fetch sees the database as it was when the snapshot
/// was taken, whatever commits meanwhile (backups read every table this way).
package protocol SnapshotReader: Sendable {
    func fetch(_ plan: ReadPlan) async throws -> ReadResult
}

import CaravanCore
import GRDB

extension SQLiteStore {
    /// Copies the database into a new file at `path` with SQLite's online backup API, while the deployment keeps
    /// serving: the pages are read inside one read transaction of the WAL pool, so the copy is the database as it was
    /// when the backup began, whatever commits meanwhile. `progress` gets (pages copied, pages in all) after each step.
    package func backup(to path: String, pagesPerStep: Int32 = 256, progress: @escaping @Sendable (Int, Int) -> Void) throws {
        do {
            let destination = try DatabaseQueue(path: path)
            try pool.backup(to: destination, pagesPerStep: pagesPerStep) { step in
                progress(step.completedPageCount, step.totalPageCount)
            }
            try destination.close()
        } catch let error as DatabaseError {
            throw CaravanError(.internalFailure, "the SQLite backup failed", internalDetail: "\(error)")
        }
    }

    /// Gives the deployment a new random sync epoch (a restored deployment is another history: every sync cursor
    /// made before must refetch).
    package func renewSyncEpoch() async throws {
        try await pool.write { db in
            try db.execute(sql: #"UPDATE "caravan_sync_state" SET "epoch" = lower(hex(randomblob(16))) WHERE "id" = 1"#)
        }
    }

    /// Closes every connection of the pool (the WAL is checkpointed into the main file). The store is unusable after.
    package func close() throws {
        try pool.close()
    }
}

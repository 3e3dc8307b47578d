package import CaravanCore
import Foundation
import Logging

extension StorageService {
    /// At start, on a deployment whose bytes are files (SQLite): removes the files no `storage_objects` row points
    /// at and the temporary files of interrupted writes (see `FileByteStore.removeOrphans`), and logs how many.
    /// Returns nil when the bytes live in the database. Call it before serving: it must not race an upload.
    @discardableResult
    package func removeOrphanedBytes() async throws(StorageError) -> FileByteStore.Sweep? {
        guard let files = bytes as? FileByteStore else { return nil }
        let table = StorageSchema.objects
        let versions = try await rows(table, where: .constant(true), as: .serviceRole).map { row throws(StorageError) in
            try StoredObject(row: row).version
        }
        let sweep: FileByteStore.Sweep
        do {
            sweep = try files.removeOrphans(keeping: Set(versions))
        } catch {
            throw logged(StorageError.from(error))
        }
        logger.info("storage orphans removed", metadata: [
            "storage.orphans": .stringConvertible(sweep.orphans), "storage.temporary_files": .stringConvertible(sweep.temporary),
            "storage.objects": .stringConvertible(versions.count),
        ])
        return sweep
    }
}

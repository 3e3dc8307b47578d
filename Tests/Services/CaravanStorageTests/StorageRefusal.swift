import CaravanStorage
import Testing

/// The code of the storage error `body` throws, or nil when it succeeds (another error is recorded as an issue).
func storageRefusal(_ body: () async throws -> Void) async -> StorageError.Code? {
    do {
        try await body()
        return nil
    } catch let error as StorageError {
        return error.code
    } catch {
        Issue.record("not a storage error: \(error)")
        return nil
    }
}

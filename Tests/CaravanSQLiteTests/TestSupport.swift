import CaravanCore
import CaravanSQLite
import Foundation
import GRDB

/// A fresh SQLite store in its own temporary directory.
func makeTemporaryStore(migrations: [Migration] = []) async throws -> (SQLiteStore, String) {
    let directory = NSTemporaryDirectory() + "caravan-test-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let store = try SQLiteStore(path: directory + "/caravan.sqlite")
    _ = try await store.migrate(migrations)
    return (store, directory)
}

/// The repository's `../shared/data` directory, or nil when it is absent.
func sharedDataFile(_ relative: String) -> String? {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let path = root.deletingLastPathComponent().appendingPathComponent("shared/data/" + relative).path
    return FileManager.default.fileExists(atPath: path) ? path : nil
}

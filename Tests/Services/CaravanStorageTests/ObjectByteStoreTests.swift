import CaravanCore
import CaravanTesting
import CaravanStorage
import Foundation
import Testing

/// Both byte stores keep exactly what was written under each version, and nothing half-written is readable: the file
/// store on a temporary directory, the database store (chunked rows) on SQLite and on PostgreSQL.
@Suite struct ObjectByteStoreTests {
    static func fileStore() throws -> FileByteStore {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("caravan-bytes-" + UUID().uuidString)
        return FileByteStore(directory: directory)
    }

    static func databaseStore(_ engine: Engine) async throws -> DatabaseByteStore {
        let store = try await engine.makeStore(migrations: StorageModule.migrations)
        let catalog = Catalog(modules: [SystemModule.module, StorageModule.module])
        return DatabaseByteStore(pipeline: WritePipeline(store: store, publisher: ChangePublisher()), catalog: catalog)
    }

    /// Sizes around the chunk boundary (1 MiB), empty included.
    static let sizes = [0, 1, 1000, DatabaseByteStore.chunkSize - 1, DatabaseByteStore.chunkSize, DatabaseByteStore.chunkSize + 1, 2 * DatabaseByteStore.chunkSize + 17]

    static func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    static func roundTrip(_ store: any ObjectByteStore) async throws {
        var written: [(ObjectVersion, Data)] = []
        for (i, size) in sizes.enumerated() {
            let version = ObjectVersion.make()
            let data = bytes(size, seed: UInt8(i))
            try await store.write(data, version: version)
            written.append((version, data))
        }
        for (version, data) in written {
            #expect(try await store.read(version) == data)
        }
        #expect(try await store.read(ObjectVersion.make()) == nil)
        try await store.remove([written[0].0, written[3].0, ObjectVersion.make()])
        #expect(try await store.read(written[0].0) == nil)
        #expect(try await store.read(written[3].0) == nil)
        #expect(try await store.read(written[4].0) == written[4].1)
    }

    @Test func fileStoreRoundTrips() async throws {
        try await Self.roundTrip(try Self.fileStore())
    }

    @Test(arguments: Engine.allCases)
    func databaseStoreRoundTrips(engine: Engine) async throws {
        try await Self.roundTrip(try await Self.databaseStore(engine))
    }

    @Test func fileStoreLeavesNoTemporaryFileAndServesNoPartialOne() async throws {
        let store = try Self.fileStore()
        let version = ObjectVersion.make()
        try await store.write(Self.bytes(4096, seed: 9), version: version)
        let folder = store.directory.appendingPathComponent(String(version.id.prefix(2)))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [version.id])
        // What a crash mid-write leaves: a temporary file under another name, never read as the object.
        let interrupted = ObjectVersion.make()
        let partialFolder = store.directory.appendingPathComponent(String(interrupted.id.prefix(2)))
        try FileManager.default.createDirectory(at: partialFolder, withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: partialFolder.appendingPathComponent(".tmp-\(interrupted.id)"))
        #expect(try await store.read(interrupted) == nil)
    }

    @Test func removeOrphansKeepsWhatRowsPointAtAndWhatIsNotCaravans() async throws {
        let store = try Self.fileStore()
        let kept = ObjectVersion.make(), orphan = ObjectVersion.make()
        try await store.write(Self.bytes(100, seed: 1), version: kept)
        try await store.write(Self.bytes(100, seed: 2), version: orphan)
        let interrupted = ObjectVersion.make()
        let folder = store.directory.appendingPathComponent(String(interrupted.id.prefix(2)))
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data([1]).write(to: folder.appendingPathComponent(".tmp-\(interrupted.id)"))
        let foreign = folder.appendingPathComponent("notes.txt")
        try Data([2]).write(to: foreign)
        let sweep = try store.removeOrphans(keeping: [kept])
        #expect(sweep == FileByteStore.Sweep(orphans: 1, temporary: 1))
        #expect(try await store.read(kept) == Self.bytes(100, seed: 1))
        #expect(try await store.read(orphan) == nil)
        #expect(FileManager.default.fileExists(atPath: foreign.path))
        #expect(try store.removeOrphans(keeping: [kept]) == FileByteStore.Sweep())
        #expect(try FileByteStore(directory: store.directory.appendingPathComponent("absent")).removeOrphans(keeping: []) == FileByteStore.Sweep())
    }

    @Test func versionsAreUUIDsOnly() {
        #expect(ObjectVersion("../../etc/passwd") == nil)
        #expect(ObjectVersion("") == nil)
        #expect(ObjectVersion("6F9619FF-8B86-D011-B42D-00C04FC964FF")?.id == "6f9619ff-8b86-d011-b42d-00c04fc964ff")
    }
}

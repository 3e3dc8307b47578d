import CaravanCore
import CaravanStorage
import CaravanTesting
import Foundation
import Logging
import Testing

/// A bucket declared with `pathsStartWithOwnerID` takes writes only under the writer's own id, by the object policy
/// alone (the same rule REST, realtime and sync would apply): upload, upsert, move and copy destinations, on both
/// engines; another bucket keeps the plain owner rule; reads and listings are untouched.
@Suite struct OwnerFolderPolicyTests {
    struct Signer: URLSigner {
        func sign(_ claims: JSONValue) async throws -> String { claims.jsonText }
        func verify(_ token: String) async throws(StorageError) -> JSONValue { throw StorageError(.invalidJWT, "unused") }
    }

    static let module = AppModule(name: "owner_folders", tables: [], migrations: [], buckets: [
        BucketDeclaration("avatars", public: true, pathsStartWithOwnerID: true),
        BucketDeclaration("shared", public: true),
    ])

    static func service(_ engine: Engine) async throws -> StorageService {
        let store = try await engine.makeStore(migrations: StorageModule.migrations)
        let catalog = Catalog(modules: [SystemModule.module, StorageModule.module, module])
        let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("caravan-owner-folders-" + UUID().uuidString)
        let storage = StorageService(pipeline: pipeline, catalog: catalog, bytes: FileByteStore(directory: directory), signer: Signer(),
                                     maxFileSize: StorageService.defaultMaxFileSize, now: { 1_700_000_000 }, logger: Logger(label: "test"))
        try await storage.createDeclaredBuckets(module.buckets)
        return storage
    }

    static func user() -> Identity { Identity(role: .authenticated, userID: UUID().uuidString.lowercased()) }

    static func upload(_ text: String) -> ObjectUpload {
        ObjectUpload(bytes: Data(text.utf8), contentType: "text/plain", cacheControl: nil, userMetadata: nil)
    }


    @Test(arguments: Engine.allCases)
    func nobodyWritesUnderAnotherUsersID(engine: Engine) async throws {
        let storage = try await Self.service(engine)
        let alice = Self.user(), bob = Self.user()
        let aliceID = try #require(alice.userID), bobID = try #require(bob.userID)

        // Alice cannot take Bob's path, nor a path outside any user's folder.
        for name in ["\(bobID)/me.jpg", "loose.jpg", "\(aliceID)x/me.jpg", "\(aliceID.uppercased())/me.jpg"] {
            #expect(await storageRefusal { _ = try await storage.upload(Self.upload("a"), bucket: "avatars", name: name, upsert: false, as: alice) }
                    == .accessDenied, "\(name)")
        }
        #expect(await storageRefusal { _ = try await storage.upload(Self.upload("a"), bucket: "avatars", name: "\(bobID)/me.jpg", upsert: true, as: alice) }
                == .accessDenied)
        // Her own folder is hers; a move or copy out of it into Bob's is refused and leaves everything as it was.
        _ = try await storage.upload(Self.upload("alice"), bucket: "avatars", name: "\(aliceID)/me.jpg", upsert: false, as: alice)
        _ = try await storage.upload(Self.upload("alice again"), bucket: "avatars", name: "\(aliceID)/me.jpg", upsert: true, as: alice)
        #expect(await storageRefusal { try await storage.move(bucket: "avatars", from: "\(aliceID)/me.jpg", to: "\(bobID)/me.jpg", as: alice) }
                == .accessDenied)
        #expect(await storageRefusal { _ = try await storage.copy(bucket: "avatars", from: "\(aliceID)/me.jpg", to: "\(bobID)/copy.jpg", upsert: false, as: alice) }
                == .accessDenied)
        try await storage.move(bucket: "avatars", from: "\(aliceID)/me.jpg", to: "\(aliceID)/moved.jpg", as: alice)
        _ = try await storage.copy(bucket: "avatars", from: "\(aliceID)/moved.jpg", to: "\(aliceID)/copy.jpg", upsert: false, as: alice)

        // Bob's path is still his to take, and so readable by anyone in the public bucket.
        _ = try await storage.upload(Self.upload("bob"), bucket: "avatars", name: "\(bobID)/me.jpg", upsert: false, as: bob)
        #expect(try await storage.download(bucket: "avatars", name: "\(bobID)/me.jpg", as: alice).1 == Data("bob".utf8))
        // The service role writes anywhere.
        _ = try await storage.upload(Self.upload("default"), bucket: "avatars", name: "default.jpg", upsert: false, as: .serviceRole)

        // Listing is unchanged: the folders at the top, and each user's files inside their own.
        let top = try await storage.list(bucket: "avatars", options: ListOptions(), as: alice).map(\.name)
        #expect(Set(top) == [aliceID, bobID, "default.jpg"])
        #expect(try await storage.list(bucket: "avatars", options: ListOptions(prefix: aliceID), as: alice).map(\.name) == ["copy.jpg", "moved.jpg"])
        #expect(try await storage.list(bucket: "avatars", options: ListOptions(prefix: bobID), as: alice).map(\.name) == ["me.jpg"])

        // The rule is the object policy's, not the storage service's: a row written straight through the write
        // pipeline, as REST or a sync push would write it, is held to it too.
        let table = StorageSchema.objects
        func insert(_ name: String, as identity: Identity) async throws {
            let row = RowValues(["bucket_id": .text("avatars"), "name": .text(name), "version": .text(ObjectVersion.make().id),
                                 "size": .integer(0), "etag": .text("\"x\""), "content_type": .text("text/plain")])
            _ = try await storage.pipeline.run(storage.catalog.access(for: identity), rollback: true) { tx in
                try await tx.insert([row], into: table, conflict: nil)
            }
        }
        let refused = await #expect(throws: CaravanError.self) { try await insert("\(bobID)/direct.jpg", as: alice) }
        #expect(refused?.code == .permissionDenied)
        try await insert("\(aliceID)/direct.jpg", as: alice)

        // A bucket without the declaration keeps the plain owner rule: any path the writer will own.
        _ = try await storage.upload(Self.upload("a"), bucket: "shared", name: "\(bobID)/note.txt", upsert: false, as: alice)
        try await storage.move(bucket: "shared", from: "\(bobID)/note.txt", to: "anywhere.txt", as: alice)
    }
}

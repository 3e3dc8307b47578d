import CImageVipsTestPreload
import CaravanCore
import CaravanStorage
import CaravanTesting
import Foundation
import Logging
import Synchronization
import Testing

/// Image renders through libvips on both engines (the object bytes in files on SQLite, in the database on
/// PostgreSQL): each resize mode's output size, quality, formats, refusals, limits, the cache and its invalidation,
/// and access as the download's. Sizes are read from the output's own header (`ImageFixtures`), not through libvips.
/// Skipped without libvips, unless `CARAVAN_REQUIRE_VIPS=1` (scripts/test): then its absence fails.
@Suite struct ImageRenderTests {
    /// Signs by keeping the claims under a random token (a stand-in for the server's JWT signer).
    final class Signer: URLSigner {
        let issued = Mutex<[String: JSONValue]>([:])
        func sign(_ claims: JSONValue) async throws -> String {
            let token = UUID().uuidString
            issued.withLock { $0[token] = claims }
            return token
        }
        func verify(_ token: String) async throws(StorageError) -> JSONValue {
            guard let claims = issued.withLock({ $0[token] }) else { throw StorageError(.invalidSignature, "Invalid signature") }
            return claims
        }
    }

    static let module = AppModule(name: "images", tables: [], migrations: [], buckets: [
        BucketDeclaration("photos", public: true),
        BucketDeclaration("private", public: false),
    ])

    static func requireVips() throws -> any ImageRenderer {
        switch VipsImageRenderer.shared {
        case .success(let renderer): return renderer
        case .failure(let error):
            let reason = "libvips is not installed (\(error.internalDetail ?? error.message)): image render tests SKIPPED"
            if ProcessInfo.processInfo.environment["CARAVAN_REQUIRE_VIPS"] == "1" {
                throw CaravanError(.internalFailure, reason + "; this run requires libvips (CARAVAN_REQUIRE_VIPS=1)")
            }
            try Test.cancel(Comment(rawValue: reason))
        }
    }

    /// libvips writes `VIPSHOME` into the environment when it starts; done while tests spawn processes, that raced
    /// `Process.run` copying the environment for a child (a SIGSEGV in a whole-suite run). The test process loads it
    /// before `main` (CImageVipsTestPreload).
    @Test func libvipsStartsBeforeMainSoItsEnvironmentWriteRacesNoThread() throws {
        #expect(caravan_vips_test_preloaded() == 1)
        _ = try Self.requireVips()
        #expect(ProcessInfo.processInfo.environment["VIPSHOME"] != nil, "libvips's environment variable is set before any test runs")
    }

    static func service(_ engine: Engine, limits: ImageTransformLimits = ImageTransformLimits(),
                        renderer: Result<any ImageRenderer, StorageError>? = nil) async throws -> StorageService {
        let renderer = try renderer ?? .success(requireVips())
        let store = try await engine.makeStore(migrations: StorageModule.migrations)
        let catalog = Catalog(modules: [SystemModule.module, StorageModule.module, module])
        let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
        let bytes: any ObjectByteStore = switch engine {
        case .sqlite: FileByteStore(directory: URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("caravan-images-" + UUID().uuidString))
        case .postgres: DatabaseByteStore(pipeline: pipeline, catalog: catalog)
        }
        let storage = StorageService(pipeline: pipeline, catalog: catalog, bytes: bytes, signer: Signer(), maxFileSize: StorageService.defaultMaxFileSize,
                                     images: ImageTransformations(renderer: renderer, limits: limits), now: { 1_700_000_000 },
                                     logger: Logger(label: "test"))
        try await storage.createDeclaredBuckets(module.buckets)
        return storage
    }

    static func upload(_ data: Data, type: String) -> ObjectUpload { ObjectUpload(bytes: data, contentType: type, cacheControl: "60", userMetadata: nil) }

    static func render(_ storage: StorageService, _ name: String, _ transform: ImageTransform, acceptsWebP: Bool = false) async throws
        -> (kind: ImageFixtures.Kind, width: Int, height: Int, bytes: Int, type: String) {
        let (_, image) = try await storage.publicRender(bucket: "photos", name: name, transform: transform, acceptsWebP: acceptsWebP)
        let size = try #require(ImageFixtures.size(of: image.bytes), "the output is a PNG, JPEG, WebP, GIF or AVIF")
        return (size.kind, size.width, size.height, image.bytes.count, image.format.contentType)
    }


    @Test(arguments: Engine.allCases)
    func resizeModesGiveTheirSizes(engine: Engine) async throws {
        let storage = try await Self.service(engine)
        _ = try await storage.upload(Self.upload(ImageFixtures.png(width: 300, height: 200), type: "image/png"), bucket: "photos", name: "a/wide.png",
                                     upsert: false, as: .serviceRole)
        let cases: [(ImageTransform, Int, Int)] = [
            (ImageTransform(width: 100, height: 100), 100, 100),  // cover, the default
            (ImageTransform(width: 100, height: 100, resize: .contain), 100, 67),
            (ImageTransform(width: 120, height: 30, resize: .fill), 120, 30),
            (ImageTransform(width: 150), 150, 100),
            (ImageTransform(height: 50), 75, 50),
            (ImageTransform(width: 600, height: 600, resize: .cover), 300, 200),  // never enlarged
            (ImageTransform(), 300, 200),
        ]
        for (transform, width, height) in cases {
            let out = try await Self.render(storage, "a/wide.png", transform)
            #expect(out.kind == .png && out.type == "image/png", "origin keeps PNG: \(transform)")
            #expect(out.width == width && out.height == height, "\(transform): \(out.width)x\(out.height)")
        }
    }

    @Test(arguments: Engine.allCases)
    func qualityAndFormats(engine: Engine) async throws {
        let storage = try await Self.service(engine)
        let renderer = try Self.requireVips()
        // A JPEG source, made from the PNG by libvips itself; its size is read back from its own SOF header.
        let jpeg = try renderer.render(ImageFixtures.png(width: 320, height: 240), plan: ImagePlan(width: 320, height: 240, crop: false), format: .jpeg, quality: 95)
        #expect(ImageFixtures.size(of: jpeg).map { "\($0.kind) \($0.width)x\($0.height)" } == "jpeg 320x240")
        _ = try await storage.upload(Self.upload(jpeg, type: "image/jpeg"), bucket: "photos", name: "photo.jpg", upsert: false, as: .serviceRole)

        let low = try await Self.render(storage, "photo.jpg", ImageTransform(width: 160, quality: 20))
        let high = try await Self.render(storage, "photo.jpg", ImageTransform(width: 160, quality: 95))
        #expect(low.kind == .jpeg && high.kind == .jpeg && low.width == 160 && low.height == 120)
        #expect(low.bytes < high.bytes, "quality 20 is smaller than 95: \(low.bytes) vs \(high.bytes)")

        let webp = try await Self.render(storage, "photo.jpg", ImageTransform(width: 80, height: 80, format: .webp))
        #expect(webp.kind == .webp && webp.type == "image/webp" && webp.width == 80 && webp.height == 80)
        let avif = try await Self.render(storage, "photo.jpg", ImageTransform(width: 64, resize: .contain, format: .avif))
        #expect(avif.kind == .avif && avif.type == "image/avif" && avif.width == 64 && avif.height == 48)
        // No format named: WebP for a client that accepts it, the source's format for one that does not.
        #expect(try await Self.render(storage, "photo.jpg", ImageTransform(width: 40), acceptsWebP: true).kind == .webp)
        #expect(try await Self.render(storage, "photo.jpg", ImageTransform(width: 40), acceptsWebP: false).kind == .jpeg)
        #expect(try await Self.render(storage, "photo.jpg", ImageTransform(width: 40, format: .origin), acceptsWebP: true).kind == .jpeg)
    }

    @Test(arguments: Engine.allCases)
    func refusalsAndLimits(engine: Engine) async throws {
        var limits = ImageTransformLimits()
        limits.maxSourcePixels = 10_000
        limits.maxSourceBytes = 40_000
        let storage = try await Self.service(engine, limits: limits)
        for (name, data, type) in [("notes.txt", Data("not an image".utf8), "text/plain"), ("small.png", ImageFixtures.png(width: 100, height: 100), "image/png"),
                                   ("many-pixels.png", ImageFixtures.png(width: 101, height: 100), "image/png"),
                                   ("big.png", ImageFixtures.png(width: 80, height: 80) + Data(count: 40_000), "image/png"),
                                   ("broken.png", ImageFixtures.png(width: 100, height: 100).prefix(20), "image/png")] {
            _ = try await storage.upload(Self.upload(data, type: type), bucket: "photos", name: name, upsert: false, as: .serviceRole)
        }
        #expect(try await Self.render(storage, "small.png", ImageTransform(width: 10)).width == 10, "at the pixel limit: rendered")
        #expect(await storageRefusal { _ = try await Self.render(storage, "notes.txt", ImageTransform(width: 10)) } == .invalidMimeType)
        #expect(await storageRefusal { _ = try await Self.render(storage, "many-pixels.png", ImageTransform(width: 10)) } == .entityTooLarge)
        #expect(await storageRefusal { _ = try await Self.render(storage, "big.png", ImageTransform(width: 10)) } == .entityTooLarge)
        #expect(await storageRefusal { _ = try await Self.render(storage, "broken.png", ImageTransform(width: 10)) } == .invalidImage)
        #expect(await storageRefusal { _ = try await Self.render(storage, "missing.png", ImageTransform(width: 10)) } == .noSuchKey)

        // Without a renderer, every render route says transformations are off, and signing gives a plain download URL.
        let off = try await Self.service(engine, renderer: .failure(StorageError(.featureNotEnabled, VipsImageRenderer.unavailableMessage)))
        _ = try await off.upload(Self.upload(ImageFixtures.png(width: 10, height: 10), type: "image/png"), bucket: "photos", name: "p.png", upsert: false, as: .serviceRole)
        #expect(await storageRefusal { _ = try await off.publicRender(bucket: "photos", name: "p.png", transform: ImageTransform(), acceptsWebP: false) } == .featureNotEnabled)
        #expect(await storageRefusal { _ = try await off.render(bucket: "photos", name: "p.png", transform: ImageTransform(), acceptsWebP: false, as: .serviceRole) }
                == .featureNotEnabled)
        let plain = try await off.signedURL(bucket: "photos", name: "p.png", expiresIn: 60, transform: ImageTransform(width: 5), as: .serviceRole)
        #expect(plain.hasPrefix("/object/sign/photos/p.png?token="))
    }

    @Test(arguments: Engine.allCases)
    func rendersAreCachedUntilTheObjectChanges(engine: Engine) async throws {
        let storage = try await Self.service(engine)
        _ = try await storage.upload(Self.upload(ImageFixtures.png(width: 300, height: 200), type: "image/png"), bucket: "photos", name: "c.png", upsert: false, as: .serviceRole)
        let transform = ImageTransform(width: 30)
        #expect(try await Self.render(storage, "c.png", transform).height == 20)
        let first = storage.images.cache.statistics
        #expect(first.count == 1 && first.hits == 0)
        #expect(try await Self.render(storage, "c.png", transform).height == 20)
        #expect(storage.images.cache.statistics.hits == 1, "the second render is the cached one")
        // Replacing the object drops its renders; the next render is of the new bytes.
        _ = try await storage.upload(Self.upload(ImageFixtures.png(width: 300, height: 100), type: "image/png"), bucket: "photos", name: "c.png", upsert: true, as: .serviceRole)
        #expect(storage.images.cache.statistics.count == 0)
        #expect(try await Self.render(storage, "c.png", transform).height == 10)
        _ = try await storage.remove(bucket: "photos", names: ["c.png"], as: .serviceRole)
        #expect(storage.images.cache.statistics.count == 0)
        #expect(await storageRefusal { _ = try await Self.render(storage, "c.png", transform) } == .noSuchKey)
    }

    @Test(arguments: Engine.allCases)
    func rendersFollowTheDownloadsAccess(engine: Engine) async throws {
        let storage = try await Self.service(engine)
        let alice = Identity(role: .authenticated, userID: UUID().uuidString.lowercased())
        let bob = Identity(role: .authenticated, userID: UUID().uuidString.lowercased())
        _ = try await storage.upload(Self.upload(ImageFixtures.png(width: 40, height: 40), type: "image/png"), bucket: "private", name: "mine.png", upsert: false, as: alice)
        let small = ImageTransform(width: 20)
        #expect(try await storage.render(bucket: "private", name: "mine.png", transform: small, acceptsWebP: false, as: alice).1.format == .png)
        #expect(await storageRefusal { _ = try await storage.render(bucket: "private", name: "mine.png", transform: small, acceptsWebP: false, as: bob) } == .noSuchKey)
        #expect(await storageRefusal { _ = try await storage.render(bucket: "private", name: "mine.png", transform: small, acceptsWebP: false, as: Identity(role: .anon)) } == .noSuchKey)
        #expect(await storageRefusal { _ = try await storage.publicRender(bucket: "private", name: "mine.png", transform: small, acceptsWebP: false) } == .noSuchBucket)
        #expect(await storageRefusal { _ = try await storage.signedURL(bucket: "private", name: "mine.png", expiresIn: 60, transform: small, as: bob) } == .noSuchKey)

        // Alice's signed URL carries the transform; it opens this object only.
        let path = try await storage.signedURL(bucket: "private", name: "mine.png", expiresIn: 60,
                                               transform: ImageTransform(width: 16, height: 8, resize: .fill, format: .webp), as: alice)
        #expect(path.hasPrefix("/render/image/sign/private/mine.png?token="))
        let token = String(try #require(path.split(separator: "=", maxSplits: 1).last))
        let (_, image) = try await storage.signedRender(bucket: "private", name: "mine.png", token: token, acceptsWebP: false)
        #expect(ImageFixtures.size(of: image.bytes).map { "\($0.kind) \($0.width)x\($0.height)" } == "webp 16x8")
        _ = try await storage.upload(Self.upload(ImageFixtures.png(width: 40, height: 40), type: "image/png"), bucket: "private", name: "other.png", upsert: false, as: alice)
        #expect(await storageRefusal { _ = try await storage.signedRender(bucket: "private", name: "other.png", token: token, acceptsWebP: false) } == .invalidSignature)
        // The same token still downloads the original through /object/sign (as storage-api's), and a transform
        // that asks for nothing signs a plain download.
        #expect(try await storage.signedDownload(bucket: "private", name: "mine.png", token: token).1 == ImageFixtures.png(width: 40, height: 40))
        let plain = try await storage.signedURL(bucket: "private", name: "mine.png", expiresIn: 60, transform: ImageTransform(format: .origin), as: alice)
        #expect(plain.hasPrefix("/object/sign/private/mine.png?token="))
    }
}

@testable import CaravanClient
import CaravanCore
import Foundation
import Synchronization
import Testing

@Suite("Attachments: the upload queue and the cache")
struct AttachmentTests {
    static let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 4])

    @Test func aRowAndItsPhotoAreQueuedInOneTransaction() throws {
        let store = try Fixture.store()
        let refused = try store.stageUpload(Self.jpeg, bucket: "photos", path: "p1/a.jpg")
        #expect(throws: Fixture.Stop.self) {
            try store.insert("favorites", Fixture.favorite("p1"), now: Fixture.now, attaching: [refused], beforeCommit: { throw Fixture.Stop() })
        }
        #expect(try store.attachments().isEmpty && (try store.rows("favorites").isEmpty), "neither the row nor its photo")

        let photo = try store.stageUpload(Self.jpeg, bucket: "photos", path: "p1/a.jpg", contentType: "image/jpeg")
        try store.insert("favorites", Fixture.favorite("p1"), now: Fixture.now, attaching: [photo])
        // A new process on the same file (after a kill) finds both waiting.
        let reopened = try LocalStore(path: store.path, tables: Array(store.tables.values))
        #expect(try reopened.rows("favorites").count == 1 && (try reopened.outbox().count == 1))
        let queued = try reopened.attachments()
        #expect(queued.map(\.state) == [.pending] && queued.first?.etag == LocalStore.etag(Self.jpeg) && queued.first?.size == 8)
        #expect(try reopened.cachedAttachment(bucket: "photos", path: "p1/a.jpg") == Self.jpeg, "the device reads its own upload")

        let again = try store.stageUpload(Data([0xFF, 0xD8, 0xFF, 9]), bucket: "photos", path: "p1/a.jpg")
        #expect(throws: ClientError.self) { try store.insert("favorites", Fixture.favorite("p2"), now: Fixture.now, attaching: [again]) }
        let replacing = try store.stageUpload(Data([0xFF, 0xD8, 0xFF, 9]), bucket: "photos", path: "p1/a.jpg", upsert: true)
        try store.update("favorites", key: .object([("id", try store.rows("favorites")[0]["id"] ?? .null)]), .object([("note", .string("new photo"))]),
                         now: Fixture.now, attaching: [replacing])
        #expect(try store.attachments().map(\.size) == [4], "an upsert replaces the waiting upload")
        #expect(!FileManager.default.fileExists(atPath: store.attachmentFile(photo.file)), "and its file")

        // Two hours on, the files staged for refused writes are taken for garbage; the queued one stays.
        let later = try LocalStore(path: store.path, tables: Array(store.tables.values),
                                   clock: WallClock { Int64(Date().timeIntervalSince1970 * 1_000_000) + 7_200_000_000 })
        try later.enforceAttachmentBudget()
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory) == [replacing.file])
    }

    @Test func aLostReplyIsSettledWithoutASecondWriteAndARefusalParks() async throws {
        let store = try Fixture.store()
        let server = FakeStorage(refusing: ["private": "AccessDenied"])
        let engine = Self.engine(store, server)
        var rejections = engine.rejections().makeAsyncIterator()
        try await store.queueUpload(Self.jpeg, bucket: "photos", path: "me/a.jpg")
        try await store.queueUpload(Self.jpeg, bucket: "private", path: "me/b.jpg")
        server.loseNextUploadReply()
        try engine.status.refreshCounts()
        #expect(engine.status.current.pendingUploads == 2 && engine.status.current.parkedUploads == 0)
        var report = SyncReport()
        try await engine.uploadAttachments(into: &report)
        #expect(report.uploaded == 1 && report.uploadsParked == 1)
        try engine.status.refreshCounts()
        #expect(engine.status.current.pendingUploads == 0 && engine.status.current.parkedUploads == 1, "the status shows the refused upload")
        #expect(server.writes() == ["photos/me/a.jpg"], "the retry after the lost reply found the object there and wrote nothing")
        let states = try store.attachments().map { "\($0.path) \($0.state) \($0.errorCode ?? "")" }
        #expect(states == ["me/b.jpg parked AccessDenied", "me/a.jpg cached "])
        let refusal = await rejections.next()
        #expect(refusal?.subject == .upload(bucket: "private", path: "me/b.jpg") && refusal?.code == "AccessDenied", "the app hears of it")
        var next = SyncReport()
        try await engine.uploadAttachments(into: &next)
        #expect(next.uploaded == 0 && next.uploadsParked == 0 && server.writes().count == 1, "a parked upload is not sent again")

        // Another device's object at the path: a plain upload parks (KeyAlreadyExists), an upsert replaces it.
        server.put("photos/me/c.jpg", Data([0xFF, 0xD8, 0xFF, 7]))
        try await store.queueUpload(Self.jpeg, bucket: "photos", path: "me/c.jpg")
        try await store.queueUpload(Self.jpeg, bucket: "photos", path: "me/d.jpg", upsert: true)
        server.put("photos/me/d.jpg", Data([0xFF, 0xD8, 0xFF, 7]))
        try await engine.uploadAttachments(into: &next)
        #expect(try store.attachment(bucket: "photos", path: "me/c.jpg")?.errorCode == "KeyAlreadyExists")
        #expect(server.object("photos/me/d.jpg") == Self.jpeg)
    }

    @Test func theCacheEvictsLeastRecentlyUsedWithinItsBudgetAndServesOffline() async throws {
        let store = try Fixture.store(caches: [.attachments(maxBytes: 10)])
        let server = FakeStorage(refusing: [:])
        for name in ["a", "b", "c"] { server.put("photos/\(name)", Data(repeating: name.utf8.first ?? 0, count: 4)) }
        let engine = Self.engine(store, server)
        _ = try await engine.attachment(bucket: "photos", path: "a")
        _ = try await engine.attachment(bucket: "photos", path: "b")
        let waiting = try await store.queueUpload(Data(repeating: 0, count: 20), bucket: "photos", path: "mine")
        #expect(try await engine.attachment(bucket: "photos", path: "a") == Data("aaaa".utf8), "a is now the most recently used")
        #expect(server.reads() == 2, "from the cache")
        _ = try await engine.attachment(bucket: "photos", path: "c")
        #expect(try store.attachments().map(\.path) == ["mine", "c", "a"], "b went: least recently used; the waiting upload is never evicted")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.attachmentsDirectory).count == 3)
        #expect(waiting.state == .pending)

        server.goOffline()
        #expect(try await engine.attachment(bucket: "photos", path: "a", refresh: true) == Data("aaaa".utf8), "offline, the cached copy answers")
        await #expect(throws: ClientError.self) { try await engine.attachment(bucket: "photos", path: "b") }
    }

    static func engine(_ store: LocalStore, _ server: FakeStorage) -> SyncEngine {
        let api = CaravanAPI(baseURL: "http://storage.test", apiKey: "anon", transport: server)
        return SyncEngine(store: store, api: api, session: SessionManager(store: store, api: api, now: { 0 }), retry: RetryPolicy(attempts: 3),
                          sleep: { _ in }, now: { 0 })
    }
}

/// `/storage/v1` in memory: objects by `bucket/path`, each write counted; refuses uploads to the buckets named, can
/// lose the reply of an upload it applied, and can go offline.
final class FakeStorage: HTTPTransport {
    private struct State {
        var objects: [String: Data] = [:]
        var writes: [String] = []
        var reads = 0
        var loseReply = false
        var offline = false
    }
    private let state = Mutex(State())
    let refusing: [String: String]

    init(refusing: [String: String]) { self.refusing = refusing }

    func put(_ key: String, _ data: Data) { state.withLock { $0.objects[key] = data } }
    func object(_ key: String) -> Data? { state.withLock { $0.objects[key] } }
    func writes() -> [String] { state.withLock { $0.writes } }
    func reads() -> Int { state.withLock { $0.reads } }
    func loseNextUploadReply() { state.withLock { $0.loseReply = true } }
    func goOffline() { state.withLock { $0.offline = true } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let path = String(request.url.dropFirst("http://storage.test/storage/v1/object/".count)).removingPercentEncoding ?? ""
        return try state.withLock { state in
            if state.offline { throw ClientError(.offline, "the server is unreachable") }
            if request.method == "POST" {
                if let code = refusing[String(path.prefix { $0 != "/" })] { return Self.refusal(code) }
                let upsert = request.headers.contains { $0 == ("x-upsert", "true") }
                if state.objects[path] != nil, !upsert { return Self.refusal("KeyAlreadyExists") }
                state.objects[path] = Data(request.body ?? [])
                state.writes.append(path)
                if state.loseReply {
                    state.loseReply = false
                    throw ClientError(.offline, "the reply was lost")
                }
                return TransportResponse(status: 200, headers: [], body: Array(#"{"Key":"x"}"#.utf8))
            }
            if path.hasPrefix("info/authenticated/") {
                guard let data = state.objects[String(path.dropFirst("info/authenticated/".count))] else { return Self.refusal("NoSuchKey") }
                let info = JSONValue.object([("size", .integer(Int64(data.count))), ("etag", .string(LocalStore.etag(data))), ("version", .string("v"))])
                return TransportResponse(status: 200, headers: [], body: Array(info.jsonText.utf8))
            }
            guard let data = state.objects[String(path.dropFirst("authenticated/".count))] else { return Self.refusal("NoSuchKey") }
            state.reads += 1
            return TransportResponse(status: 200, headers: [("ETag", LocalStore.etag(data))], body: Array(data))
        }
    }

    static func refusal(_ code: String) -> TransportResponse {
        TransportResponse(status: 400, headers: [], body: Array(#"{"statusCode":"403","code":"\#(code)","error":"x","message":"\#(code)"}"#.utf8))
    }
}

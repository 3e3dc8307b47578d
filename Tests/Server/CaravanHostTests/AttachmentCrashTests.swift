import CaravanClient
import CaravanCore
import CaravanHost
import CaravanTesting
import Foundation
import LanguageExchange
import Testing

/// An attachment upload across a SIGKILL and a server restart, applied once: the real `caravan-client` queues a
/// profile photo offline, is killed after the server stored it but before the client recorded the answer, and the
/// next sync — against the restarted server — settles it without writing it again. Another device downloads it and,
/// with the server gone, reads it from its cache.
@Suite struct AttachmentCrashTests {
    static let photo = Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x42, count: 2_000))

    @Test func anUploadKilledMidwayIsAppliedOnceAfterAServerRestart() async throws {
        let client = try ClientBinary()
        let settings = ["port": "0", "data_dir": temporaryDirectory()]
        let work = temporaryDirectory()
        let (phone, tablet) = (work + "/phone.sqlite", work + "/tablet.sqlite")
        try Self.photo.write(to: URL(fileURLWithPath: work + "/me.jpg"))
        let server = DeviceUpgradeTests()
        var object = ""
        var version = ""

        try await server.withServer(settings, LanguageExchangeModule.module) { serving in
            let signedUp = try await client.run(serving, phone, ["sign-up", "--email", "photo@example.com", "--password", "correct horse battery"])
            guard case .string(let user)? = try JSONParser.parse(signedUp.stdout)["user_id"] else { Issue.record("\(signedUp)"); return }
            object = user + "/avatar.jpg"
            let queued = try await client.run(serving, phone, ["attach", "avatars", object, work + "/me.jpg", "--content-type", "image/jpeg"])
            #expect(queued.status == 0, "\(queued.stderr)")
            let killed = try await client.run(serving, phone, ["sync", "--tables", "messages"], crashAt: "during-upload")
            #expect(killed.status == 9, "SIGKILLed after the upload's answer came: \(killed)")
            guard let stored = try await Self.info(serving, object) else { Issue.record("the killed upload did not reach the server"); return }
            version = stored.version
            let pending = try JSONParser.parse(try await client.run(serving, phone, ["attachments"]).stdout)
            #expect(Self.first(pending, "pending")?["attempts"] == .integer(1), "still pending after the kill: \(pending)")
        }

        try await server.withServer(settings, LanguageExchangeModule.module) { serving in
            let synced = try await client.run(serving, phone, ["sync", "--tables", "messages", "--json"])
            #expect(try JSONParser.parse(synced.stdout)["uploaded"] == .integer(1), "\(synced)")
            let stored = try await Self.info(serving, object)
            #expect(stored?.version == version && stored?.etag == LocalStore.etag(Self.photo), "settled without a second write")
            let listed = try JSONParser.parse(try await client.run(serving, phone, ["attachments"]).stdout)
            #expect(listed["pending"] == .array([]) && Self.first(listed, "cached")?["path"] == .string(object), "\(listed)")
            let again = try await client.run(serving, phone, ["sync", "--tables", "messages", "--json"])
            #expect(try JSONParser.parse(again.stdout)["uploaded"] == .integer(0))

            _ = try await client.run(serving, tablet, ["sign-in", "--email", "photo@example.com", "--password", "correct horse battery"])
            let downloaded = try await client.run(serving, tablet, ["attachment", "avatars", object, "--out", work + "/downloaded.jpg"])
            #expect(downloaded.status == 0, "\(downloaded.stderr)")
            #expect(FileManager.default.contents(atPath: work + "/downloaded.jpg") == Self.photo)
        }

        // The server is gone: the tablet reads the photo from its cache.
        let offline = try await client.run(url: "http://127.0.0.1:1", key: "anon", tablet, ["attachment", "avatars", object, "--out", work + "/offline.jpg"])
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(FileManager.default.contents(atPath: work + "/offline.jpg") == Self.photo)
    }

    /// The object's metadata, read as the service role.
    static func info(_ serving: CaravanHost.Serving, _ object: String) async throws -> StorageObjectInfo? {
        let transport = AsyncHTTPClientTransport()
        let api = CaravanAPI(baseURL: serving.baseURL, apiKey: serving.serviceRoleKey, transport: transport)
        let result: Result<StorageObjectInfo?, any Error>
        do { result = .success(try await api.objectInfo(bucket: "avatars", path: object, token: nil)) } catch { result = .failure(error) }
        try await transport.shutdown()
        return try result.get()
    }

    /// The first entry of list `name` of an `attachments` listing.
    static func first(_ listing: JSONValue, _ name: String) -> JSONValue? {
        if case .array(let entries)? = listing[name] { entries.first } else { nil }
    }
}

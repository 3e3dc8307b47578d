import CaravanCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `Examples/Notes`: a binary of someone's own (`caravan-notes`) runs Caravan's command line with its own app module,
/// declared without SQL. It migrates, serves REST under its policy, and answers its RPC.
@Suite struct OwnAppTests {
    @Test func theNotesExampleMigratesServesItsTableAndAnswersItsRPC() async throws {
        let notes = try CaravanBinary(named: "caravan-notes")
        let data = temporaryDirectory()
        let (migrated, migrations, migrateError) = try await notes.run(["migrate", "--data-dir", data])
        #expect(migrated == 0, "\(migrateError)")
        #expect(migrations.hasSuffix("auth-0001-create\nsystem-0006-auth-users\nsystem-0007-search-functions\nauth-0002-flow-state\nauth-0003-mfa\nstorage-0001-create\nnotes-0001-create\n"), "the notes table and no shipped app: \(migrations)")

        let (_, keysJSON, _) = try await notes.run(["keys", "--data-dir", data, "--json"])
        guard case .string(let anon)? = try JSONParser.parse(keysJSON)["anon_key"] else { Issue.record("no anon key"); return }
        let (created, userJSON, createError) = try await notes.run(["user", "create", "--data-dir", data, "--email", "noor@example.test", "--password", "a long secret"])
        #expect(created == 0, "\(createError)")
        guard case .string(let userID)? = try JSONParser.parse(userJSON)["id"] else { Issue.record("no user id in \(userJSON)"); return }

        let (server, base) = try await startServer(notes, data: data)
        defer { server.terminate() }
        let (signedIn, session) = try await httpSend("POST", base + "/auth/v1/token?grant_type=password",
                                                    body: #"{"email":"noor@example.test","password":"a long secret"}"#, headers: ["apikey": anon])
        #expect(signedIn == 200)
        guard case .string(let token)? = try JSONParser.parse(session)["access_token"] else { Issue.record("no token in \(session)"); return }
        let asNoor = ["apikey": anon, "Authorization": "Bearer \(token)"]

        let (inserted, _) = try await httpSend("POST", base + "/rest/v1/notes", body: #"{"owner":"\#(userID)","title":"Buy dates","pinned":true}"#, headers: asNoor)
        #expect(inserted == 201)
        let (refused, refusal) = try await httpSend("POST", base + "/rest/v1/notes", body: #"{"owner":"\#(UUID().uuidString.lowercased())","title":"Not mine"}"#, headers: asNoor)
        #expect(refused == 403 && refusal.contains("42501"), "the policy refuses another owner: \(refusal)")
        let (blank, blankError) = try await httpSend("POST", base + "/rest/v1/notes", body: #"{"owner":"\#(userID)","title":""}"#, headers: asNoor)
        #expect(blank == 400 && blankError.contains("23514"), "the declared check: \(blankError)")

        let (read, rows, _) = try await httpGet(base + "/rest/v1/notes?select=title,pinned", headers: asNoor)
        #expect(read == 200)
        #expect(rows == #"[{"title":"Buy dates","pinned":true}]"#)
        let (_, anonymousRows, _) = try await httpGet(base + "/rest/v1/notes?select=title", headers: ["apikey": anon])
        #expect(anonymousRows == "[]", "anonymous callers see no notes")
        let (called, count) = try await httpSend("POST", base + "/rest/v1/rpc/count_notes", body: #"{"only_pinned":true}"#, headers: asNoor)
        #expect(called == 200 && count == "1")
        let (missing, _, _) = try await httpGet(base + "/rest/v1/places?select=id", headers: ["apikey": anon])
        #expect(missing == 404, "places is not an app of this binary")
    }
}

extension OwnAppTests {
    /// An app's commands live beside it (`Sources/Apps/<App>/<App>Commands`) and reach a binary only with the app: `caravan`
    /// imports places, world and restaurants and has `caravan decisions`; `caravan-notes`, without those apps, has
    /// neither (GTFS bundles are the platform's).
    @Test func appCommandsComeWithTheirApps() async throws {
        let (_, imports, _) = try await CaravanBinary().run(["import", "--help"])
        for command in ["places", "world", "restaurants", "gtfs"] { #expect(imports.contains("\n  \(command) "), "\(imports)") }
        let (_, top, _) = try await CaravanBinary().run(["--help"])
        #expect(top.contains("\n  decisions "))
        let (_, tally, _) = try await CaravanBinary().run(["bench", "--help"])
        #expect(tally.contains("\n  generate-places ") && tally.contains("\n  travel-search "))

        let notes = try CaravanBinary(named: "caravan-notes")
        let (_, ownImports, _) = try await notes.run(["import", "--help"])
        for command in ["places", "world", "restaurants", "gtfs"] { #expect(!ownImports.contains("\n  \(command) "), "\(ownImports)") }
        let (_, ownTop, _) = try await notes.run(["--help"])
        #expect(!ownTop.contains("\n  decisions ") && !ownTop.contains("\n  transit "))

        // A bundled app is served only by a binary that has it, and a malformed --bundle is refused before serving.
        let (refused, _, refusal) = try await notes.run(["serve", "--data-dir", temporaryDirectory(), "--bundle", "transit=/nowhere.sqlite"])
        #expect(refused != 0 && refusal.contains("--bundle transit: no bundled app of that name (this binary has: none)"), "\(refusal)")
        let (malformed, _, complaint) = try await CaravanBinary().run(["serve", "--data-dir", temporaryDirectory(), "--bundle", "transit"])
        #expect(malformed != 0 && complaint.contains("--bundle takes NAME=PATH, got transit"), "\(complaint)")
    }

    /// `migrations freeze` writes the declared migrations' SQL per engine, finds the committed files of the example
    /// unchanged (so they cannot drift from the declarations), and refuses to overwrite an edited file.
    @Test func freezingWritesEachDialectOnceAndRefusesAnEditedFile() async throws {
        let notes = try CaravanBinary(named: "caravan-notes")
        let committed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Examples/Notes/Sources/Notes/Migrations").path
        let (checked, report, checkError) = try await notes.run(["migrations", "freeze", "--app", "notes", "--out", committed])
        #expect(checked == 0, "\(checkError)")
        #expect(report == "unchanged \(committed)/sqlite/notes-0001-create.sql\nunchanged \(committed)/postgres/notes-0001-create.sql\n")

        let out = temporaryDirectory()
        let (written, firstReport, _) = try await notes.run(["migrations", "freeze", "--app", "notes", "--out", out])
        #expect(written == 0 && firstReport.hasPrefix("written \(out)/sqlite/notes-0001-create.sql\n"))
        for dialect in ["sqlite", "postgres"] {
            #expect(FileManager.default.contents(atPath: "\(out)/\(dialect)/notes-0001-create.sql")
                    == FileManager.default.contents(atPath: "\(committed)/\(dialect)/notes-0001-create.sql"))
        }
        let edited = "\(out)/postgres/notes-0001-create.sql"
        try Data("CREATE TABLE \"notes\" (\"id\" uuid);\n".utf8).write(to: URL(fileURLWithPath: edited))
        let (refused, _, refusal) = try await notes.run(["migrations", "freeze", "--app", "notes", "--out", out])
        #expect(refused != 0 && refusal.contains("never edited"), "\(refusal)")
        #expect(String(decoding: FileManager.default.contents(atPath: edited) ?? Data(), as: UTF8.self).hasPrefix("CREATE TABLE \"notes\" (\"id\" uuid)"))
        let (unknown, _, unknownError) = try await notes.run(["migrations", "freeze", "--app", "places", "--out", out])
        #expect(unknown != 0 && unknownError.contains("unknown app places"))
    }
}

/// Sends a JSON request; returns the status and body.
func httpSend(_ method: String, _ url: String, body: String, headers: [String: String]) async throws -> (Int, String) {
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = method
    request.httpBody = Data(body.utf8)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as! HTTPURLResponse).statusCode, String(decoding: data, as: UTF8.self))
}

import CaravanCore
import CaravanSQLite
import CaravanTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Runs the real `caravan` executable built next to this test bundle.
struct CaravanBinary {
    let url: URL

    init(named name: String = "caravan") throws {
        let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidate = directory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: candidate.path) else {
            throw CaravanError(.internalFailure, "\(name) binary not found at \(candidate.path); run swift build first")
        }
        url = candidate
    }

    /// Runs to completion; returns (exit status, stdout, stderr).
    func run(_ arguments: [String]) async throws -> (Int32, String, String) {
        try await run(arguments, input: nil)
    }

    /// Runs to completion with `input` (when given) on stdin; returns (exit status, stdout, stderr).
    func run(_ arguments: [String], input: String?) async throws -> (Int32, String, String) {
        let outcome = try await ChildProcess.run(url, arguments, input: input)
        return (outcome.status, outcome.stdout, outcome.stderr)
    }

    /// A new temporary data directory holding a deployment (`caravan migrate`: only it and `serve` create one).
    func newDeployment() async throws -> String {
        let data = temporaryDirectory()
        let (status, _, error) = try await run(["migrate", "--data-dir", data])
        guard status == 0 else { throw CaravanError(.internalFailure, "caravan migrate failed: \(error)") }
        return data
    }
}

func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "caravan-cli-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A loopback port that was free a moment ago.
func freePort() throws -> Int {
    let (fd, port) = try boundLoopbackSocket()
    close(fd)
    return port
}

/// A TCP socket bound to a free loopback port (not listening yet): its descriptor, which the caller closes, and the port.
func boundLoopbackSocket() throws -> (Int32, Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    guard bound == 0 else { close(fd); throw CaravanError(.internalFailure, "bind failed") }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

func httpPost(_ url: String, body: String, headers: [String: String]) async throws -> Int {
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = "POST"
    request.httpBody = Data(body.utf8)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (_, response) = try await URLSession.shared.data(for: request)
    return (response as! HTTPURLResponse).statusCode
}

/// Starts `caravan serve` on a free port and waits for /health; returns the process and the base URL.
func startServer(_ caravan: CaravanBinary, data: String) async throws -> (Process, String) {
    let port = try freePort()
    let server = Process()
    server.executableURL = caravan.url
    server.arguments = ["serve", "--data-dir", data, "--port", String(port), "--log-level", "warning"]
    server.standardOutput = FileHandle.nullDevice
    server.standardError = FileHandle.nullDevice
    try server.run()
    let base = "http://127.0.0.1:\(port)"
    for _ in 0..<100 {
        if let (status, _, _) = try? await httpGet(base + "/health"), status == 200 { return (server, base) }
        try await Task.sleep(for: .milliseconds(100))
    }
    server.terminate()
    throw CaravanError(.internalFailure, "caravan serve did not become healthy")
}

func httpGet(_ url: String, headers: [String: String] = [:]) async throws -> (Int, String, [String: String]) {
    var request = URLRequest(url: URL(string: url)!)
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = response as! HTTPURLResponse
    var fields: [String: String] = [:]
    for (name, value) in http.allHeaderFields { fields[String(describing: name).lowercased()] = String(describing: value) }
    return (http.statusCode, String(decoding: data, as: UTF8.self), fields)
}

let samplePlaces = """
[
  {"id": "b-place", "name_ar": "ب", "name_en": "B Cafe", "category_en": "cafe", "category": "كافيه", "lat": 24.7, "lng": 46.7},
  {"id": "a-place", "name_ar": "أ", "category_en": "park", "category": "حدائق"},
  {"id": "bad", "name_ar": "x", "lat": 99, "lng": 46.7},
  {"id": "c-place", "name_ar": "ج", "category_en": "cafe", "category": "كافيه", "price_level": "$$"}
]
"""

@Suite("The caravan command line", .serialized)
struct CLITests {
    @Test func importReportsEveryRejectionAndDryRunWritesNothing() async throws {
        let caravan = try CaravanBinary()
        let data = try await caravan.newDeployment()
        let file = data + "-places.json"
        try Data(samplePlaces.utf8).write(to: URL(fileURLWithPath: file))

        let (dryStatus, dryOut, _) = try await caravan.run(["import", "places", file, "--data-dir", data, "--dry-run"])
        #expect(dryStatus == 0)
        #expect(dryOut.contains("rejected row 2 (id bad): lat,lng: new row for relation \"places\" violates check constraint \"valid_coordinates\""))
        #expect(dryOut.contains("dry run: 4 rows, 3 valid, 1 rejected; nothing written"))

        let (status, out, _) = try await caravan.run(["import", "places", file, "--data-dir", data, "--json"])
        #expect(status == 0)
        let summary = try JSONParser.parse(out)
        #expect(summary["inserted"] == .integer(3))
        #expect(summary["rejected"] == .integer(1))
        #expect(summary["rejections"] == .array([.object([("index", .integer(2)), ("id", .string("bad")), ("field", .string("lat,lng")),
                                                          ("reason", .string("new row for relation \"places\" violates check constraint \"valid_coordinates\""))])]))
        let (_, again, _) = try await caravan.run(["import", "places", file, "--data-dir", data])
        #expect(again.contains("4 rows: 0 inserted, 3 updated, 1 rejected"))

        let (badStatus, _, badError) = try await caravan.run(["import", "places", data + "/missing.json", "--data-dir", data])
        #expect(badStatus != 0)
        #expect(badError.contains("cannot read"))
    }

    @Test func migrateListsAppliedMigrationsAndKeysPrintsJSON() async throws {
        let caravan = try CaravanBinary()
        let data = temporaryDirectory()
        let (status, out, said) = try await caravan.run(["migrate", "--data-dir", data])
        #expect(status == 0)
        #expect(said == "caravan: created a new deployment in \(data)\n")
        #expect(out == "system-0001-users\nsystem-0002-change-log\nsystem-0003-users-auth\nsystem-0004-secrets\nsystem-0005-sync\nauth-0001-create\nplaces-0001-create\nplaces-0002-search\nplaces-0003-search-postgres\nplaces-0004-search-plans\nsystem-0006-auth-users\nsystem-0007-search-functions\nauth-0002-flow-state\nauth-0003-mfa\nstorage-0001-create\nplaces-0005-derived-by-pipeline\ntravel-0001-create\ngroup-decisions-0001-create\ngroup-decisions-0002-member-profiles\nlanguage-exchange-0001-create\nlanguage-exchange-0002-match-order\n")
        let (again, listed, saidAgain) = try await caravan.run(["migrate", "--data-dir", data])
        #expect(again == 0 && listed == out && saidAgain.isEmpty, "a second migrate creates nothing: \(saidAgain)")
        let (_, first, _) = try await caravan.run(["keys", "--data-dir", data, "--json"])
        let (_, second, _) = try await caravan.run(["keys", "--data-dir", data, "--json"])
        #expect(first == second)
        let keys = try JSONParser.parse(first)
        guard case .string(let anon)? = keys["anon_key"], case .string(let service)? = keys["service_role_key"] else {
            Issue.record("keys JSON lacks anon_key/service_role_key: \(first)"); return
        }
        #expect(anon != service)
        #expect(anon.split(separator: ".").count == 3)
        let mode = try FileManager.default.attributesOfItem(atPath: data + "/jwt_secret.json")[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aDeploymentServesTheAppsItIsStartedWith() async throws {
        let caravan = try CaravanBinary()
        let data = temporaryDirectory()
        let (unknown, _, unknownError) = try await caravan.run(["migrate", "--data-dir", data, "--apps", "places,nope"])
        #expect(unknown != 0)
        #expect(unknownError.contains("unknown app nope"))
        #expect(!FileManager.default.fileExists(atPath: data + "/caravan.sqlite"))
        let (status, out, _) = try await caravan.run(["migrate", "--data-dir", data, "--apps", "places"])
        #expect(status == 0)
        #expect(out.hasSuffix("places-0003-search-postgres\nplaces-0004-search-plans\nsystem-0006-auth-users\nsystem-0007-search-functions\nauth-0002-flow-state\nauth-0003-mfa\nstorage-0001-create\nplaces-0005-derived-by-pipeline\n"))
    }

    /// Only `serve` and `migrate` create a deployment: every other command on a directory without one (a typo in
    /// `--data-dir`, another working directory) is refused, naming the directory and `--data-dir`, and leaves it
    /// as it was — it does not print keys of a fresh deployment that the running server would reject.
    @Test func commandsOnADirectoryWithoutADeploymentAreRefusedAndCreateNothing() async throws {
        let caravan = try CaravanBinary()
        let empty = temporaryDirectory()
        let missing = temporaryDirectory() + "/typo"
        let file = empty + "-places.json"
        try Data(samplePlaces.utf8).write(to: URL(fileURLWithPath: file))
        let commands: [[String]] = [["keys"], ["keys", "--json"], ["user", "list"], ["import", "places", file], ["export", "user", "x@example.com"],
                                    ["backup", "--out", empty + "-backup"], ["changes", "compact", "--older-than", "0s"]]
        for directory in [empty, missing] {
            for command in commands {
                let (status, out, err) = try await caravan.run(command + ["--data-dir", directory])
                #expect(status != 0, "\(command) on \(directory)")
                #expect(out.isEmpty, "\(command): \(out)")
                #expect(err.contains("there is no Caravan deployment in \(directory)") && err.contains("--data-dir") && err.contains("caravan migrate"), "\(command): \(err)")
                #expect(!err.contains("CaravanError("), "\(err)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty, "nothing was created in the empty directory")
        #expect(!FileManager.default.fileExists(atPath: missing), "nor the mistyped one")
    }

    @Test func serveAnswersOverHTTPAndShutsDownGracefully() async throws {
        let caravan = try CaravanBinary()
        let data = try await caravan.newDeployment()
        let file = data + "-places.json"
        try Data(samplePlaces.utf8).write(to: URL(fileURLWithPath: file))
        _ = try await caravan.run(["import", "places", file, "--data-dir", data])
        let (_, keysJSON, _) = try await caravan.run(["keys", "--data-dir", data, "--json"])
        guard case .string(let anon)? = try JSONParser.parse(keysJSON)["anon_key"] else { Issue.record("no anon key"); return }

        let port = try freePort()
        let server = Process()
        server.executableURL = caravan.url
        server.arguments = ["serve", "--data-dir", data, "--port", String(port)]
        let log = Pipe()
        server.standardOutput = log
        server.standardError = log
        try server.run()
        defer { if server.isRunning { server.terminate() } }

        let base = "http://127.0.0.1:\(port)"
        var healthy = false
        for _ in 0..<100 where !healthy {
            if let (status, _, _) = try? await httpGet(base + "/health"), status == 200 { healthy = true } else {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        #expect(healthy)

        let (status, body, headers) = try await httpGet(base + "/rest/v1/places?select=id&category=eq.cafe&order=id.desc",
                                                        headers: ["apikey": anon, "Prefer": "count=exact"])
        #expect(status == 200)
        #expect(body == #"[{"id":"c-place"},{"id":"b-place"}]"#)
        #expect(headers["content-range"] == "0-1/2")
        let (unauthorized, _, _) = try await httpGet(base + "/rest/v1/places")
        #expect(unauthorized == 401)

        server.terminate() // SIGTERM
        let deadline = ContinuousClock.now + .seconds(10)
        while server.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!server.isRunning)
        #expect(server.terminationStatus == 0)
        let output = String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(output.contains("http.status=200"))
        #expect(!output.contains(anon))
    }

    /// Acknowledged writes survive a SIGKILL: every row that got a 201 is there after a restart, with its
    /// change-log entry.
    @Test func acknowledgedWritesSurviveAKill() async throws {
        let caravan = try CaravanBinary()
        let data = temporaryDirectory()
        _ = try await caravan.run(["migrate", "--data-dir", data])
        let (_, keysJSON, _) = try await caravan.run(["keys", "--data-dir", data, "--json"])
        guard case .string(let service)? = try JSONParser.parse(keysJSON)["service_role_key"] else { Issue.record("no service key"); return }
        let (server, base) = try await startServer(caravan, data: data)
        let pid = server.processIdentifier
        // The kill lands mid-stream once enough writes are acknowledged (a fixed delay is too short on a busy machine).
        var killer: Task<Void, any Error>?
        var acknowledged: [String] = []
        for i in 0..<5000 {
            let id = "crash-\(i)"
            let body = #"{"id":"\#(id)","name_ar":"x","category":"c","category_ar":"c"}"#
            guard let status = try? await httpPost(base + "/rest/v1/places", body: body, headers: ["apikey": service]) else { break }
            if status == 201 { acknowledged.append(id) }
            if acknowledged.count == 20, killer == nil {
                killer = Task {
                    try await Task.sleep(for: .milliseconds(150))
                    kill(pid, SIGKILL)
                }
            }
        }
        _ = try await killer?.value
        server.waitUntilExit()
        #expect(server.terminationReason == .uncaughtSignal)
        #expect(acknowledged.count > 10, "the kill came before enough writes to be meaningful")

        let (restarted, restartedBase) = try await startServer(caravan, data: data)
        defer { restarted.terminate() }
        let (status, body, _) = try await httpGet(restartedBase + "/rest/v1/places?select=id&id=like.crash-*&limit=10000", headers: ["apikey": service])
        #expect(status == 200)
        guard case .array(let rows) = try JSONParser.parse(body) else { Issue.record("not an array"); return }
        let stored = Set(rows.compactMap { if case .string(let id)? = $0["id"] { id } else { nil } })
        #expect(Set(acknowledged).isSubset(of: stored), "lost \(Set(acknowledged).subtracting(stored).count) acknowledged rows")
        let changes = try await SQLiteStore(path: data + "/caravan.sqlite").changes(after: 0, limit: 100_000)
        let logged = Set(changes.filter { $0.table == "places" && $0.operation == .insert }.compactMap { change -> String? in
            if case .string(let id)? = try? JSONParser.parse(change.primaryKey)["id"] { return id } else { return nil }
        })
        #expect(Set(acknowledged).isSubset(of: logged))
        #expect(logged == stored)
    }
}

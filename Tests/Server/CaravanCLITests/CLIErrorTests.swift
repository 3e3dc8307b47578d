import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Errors of the real `caravan` binary say what went wrong and what to do, on one line, with a non-zero status:
/// never a `CaravanError(…)` or Foundation dump.
@Suite("Command-line errors that say what to do", .serialized)
struct CLIErrorTests {
    /// No type dump in what the user reads.
    private func expectNoDump(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!text.contains("CaravanError("), sourceLocation: sourceLocation)
        #expect(!text.contains("NSCocoaErrorDomain"), sourceLocation: sourceLocation)
        #expect(!text.contains("errno:"), sourceLocation: sourceLocation)
    }

    @Test func aPortInUseIsNamedBeforeAnyServingLine() async throws {
        let caravan = try CaravanBinary()
        let (fd, port) = try boundLoopbackSocket()
        defer { close(fd) }
        #expect(listen(fd, 1) == 0)

        let (status, out, err) = try await caravan.run(["serve", "--data-dir", temporaryDirectory(), "--port", String(port)])
        #expect(status != 0)
        #expect(err.contains("caravan: port \(port) on 127.0.0.1 is already in use"))
        #expect(err.contains("--port"))
        #expect(!(out + err).contains("caravan serving"))
        expectNoDump(out + err)
    }

    @Test func anUnreachablePostgresIsNamedWithItsCause() async throws {
        let caravan = try CaravanBinary()
        let port = try freePort()  // nothing listens there: connection refused
        let url = "postgres://someone:hunter2@127.0.0.1:\(port)/appdb"
        let started = ContinuousClock.now
        let (status, out, err) = try await caravan.run(["migrate", "--database", url])
        #expect(status != 0)
        #expect(err.contains("cannot reach PostgreSQL at 127.0.0.1:\(port), database appdb: Connection refused"))
        #expect(!err.contains("hunter2"))
        #expect(ContinuousClock.now - started < .seconds(8))
        expectNoDump(out + err)
    }

    @Test func aDataDirectoryThatIsAFileIsNamed() async throws {
        let caravan = try CaravanBinary()
        let file = temporaryDirectory() + "/not-a-directory"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        for arguments in [["migrate"], ["serve", "--port", "0"]] {
            let (status, out, err) = try await caravan.run(arguments + ["--data-dir", file])
            #expect(status != 0)
            #expect(err.contains("caravan: the data directory \(file) is a file, not a directory"))
            expectNoDump(out + err)
        }
    }

    @Test func aSecondServerOnOneDataDirectoryIsRefusedNamingTheFirst() async throws {
        let caravan = try CaravanBinary()
        let data = temporaryDirectory()
        _ = try await caravan.run(["migrate", "--data-dir", data])
        let (first, _) = try await startServer(caravan, data: data)
        let (status, out, err) = try await caravan.run(["serve", "--data-dir", data, "--port", "0"])
        #expect(status != 0)
        #expect(err.contains("caravan: the data directory \(data) is in use by another caravan server (pid \(first.processIdentifier))"))
        expectNoDump(out + err)
        // The kernel drops the lock with the process, even on SIGKILL.
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let (second, _) = try await startServer(caravan, data: data)
        second.terminate()
        second.waitUntilExit()
    }

    @Test func aUserWithoutAPasswordIsRefused() async throws {
        let caravan = try CaravanBinary()
        let data = try await caravan.newDeployment()
        let (status, out, err) = try await caravan.run(["user", "create", "--email", "x@example.com", "--data-dir", data])
        #expect(status != 0)
        #expect(err.contains("a user needs a password"))
        expectNoDump(out + err)
        let (_, list, _) = try await caravan.run(["user", "list", "--data-dir", data])
        #expect(!list.contains("x@example.com"))
    }

    @Test func versionNamesTheVersionCommitAndBuildDate() async throws {
        let (status, out, _) = try await CaravanBinary().run(["--version"])
        #expect(status == 0)
        #expect(out.hasPrefix("caravan "))
        #expect(out.contains("commit "))
        #expect(out.contains("built "))
    }

    @Test func theStartUpBannerNamesTheURLsTheDataTheAppsAndTheKeys() async throws {
        let caravan = try CaravanBinary()
        let data = temporaryDirectory()
        let port = try freePort()
        let output = data + "-stdout.txt"
        FileManager.default.createFile(atPath: output, contents: nil)
        let server = Process()
        server.executableURL = caravan.url
        server.arguments = ["serve", "--data-dir", data, "--port", String(port), "--apps", "places", "--log-level", "warning"]
        server.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }
        var banner = ""
        for _ in 0..<100 where !banner.contains("keys:") {
            try await Task.sleep(for: .milliseconds(100))
            banner = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        }
        #expect(banner.contains("API:       http://127.0.0.1:\(port)"))
        #expect(banner.contains("console:   http://127.0.0.1:\(port)/admin"))
        #expect(banner.contains("data:      \(data) (SQLite)  (a new deployment, created now)\n"))
        #expect(banner.contains("apps:      places\n"))
        #expect(banner.contains("keys:      caravan keys --data-dir \(data)"))
    }
}

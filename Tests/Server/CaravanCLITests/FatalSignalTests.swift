import CaravanCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// A crash is never silent. The real `caravan serve` binary, sent a fatal signal, writes one line
/// naming it on standard error and still dies by that signal (so a supervisor sees a crash and restarts it).
@Suite("Fatal signals are reported")
struct FatalSignalTests {
    @Test(arguments: [(SIGSEGV, "SIGSEGV"), (SIGABRT, "SIGABRT"), (SIGBUS, "SIGBUS")])
    func aFatalSignalWritesOneLineAndEndsTheProcessByIt(signal: Int32, name: String) async throws {
        let port = try freePort()
        let server = Process()
        server.executableURL = try CaravanBinary().url
        server.arguments = ["serve", "--data-dir", temporaryDirectory(), "--port", String(port), "--log-level", "warning"]
        // Without Swift's backtracer the default action follows at once; with it, the same line comes first.
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        server.environment = environment
        let errors = Pipe()
        server.standardOutput = FileHandle.nullDevice
        server.standardError = errors
        try server.run()
        defer { if server.isRunning { server.terminate() } }
        var healthy = false
        for _ in 0..<150 where !healthy {
            if let (status, _, _) = try? await httpGet("http://127.0.0.1:\(port)/health"), status == 200 { healthy = true } else {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        #expect(healthy)

        #expect(kill(server.processIdentifier, signal) == 0)
        let deadline = ContinuousClock.now + .seconds(20)
        while server.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!server.isRunning)
        #expect(server.terminationReason == .uncaughtSignal, "the process must end by the signal, not exit")
        #expect(server.terminationStatus == signal)
        let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = output.split(separator: "\n").filter { $0.contains("fatal signal") }
        #expect(lines == ["caravan[\(server.processIdentifier)]: fatal signal \(name) (\(signal)); the process is ending"], "\(output)")
    }
}

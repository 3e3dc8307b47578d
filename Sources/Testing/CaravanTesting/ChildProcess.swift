package import Foundation

/// A child process run to its end by a test, waited for on a thread of its own: a test waiting for a child never holds
/// one of the few threads of the cooperative pool (two on a two-core machine), which the servers and clients of the
/// tests running beside it need.
package enum ChildProcess {
    /// What a finished child left: its exit status and everything it wrote.
    package struct Outcome: Sendable {
        package let status: Int32
        package let stdout: String
        package let stderr: String
    }

    /// Runs `executable` with `arguments` (and `input` on its stdin when given) to its end.
    package static func run(_ executable: URL, _ arguments: [String], input: String? = nil,
                            in directory: URL? = nil) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try runBlocking(executable, arguments, input: input, in: directory) })
            }.start()
        }
    }

    private static func runBlocking(_ executable: URL, _ arguments: [String], input: String?, in directory: URL?) throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let stdin = Pipe(), out = Pipe(), err = Pipe()
        if input != nil { process.standardInput = stdin }
        process.standardOutput = out
        process.standardError = err
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
        }
        // stderr drains beside stdout: a child filling one pipe while the test reads the other never stalls.
        let stderr = DrainedPipe(err.fileHandleForReading)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                       stderr: String(decoding: stderr.wait(), as: UTF8.self))
    }
}

/// A pipe's read end read to its end on a thread of its own.
private final class DrainedPipe: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }.start()
    }

    /// Everything written, once the writer closed its end.
    func wait() -> Data {
        done.wait()
        return data
    }
}

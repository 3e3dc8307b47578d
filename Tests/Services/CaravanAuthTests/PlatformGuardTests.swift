import Foundation
import Testing

/// The library targets build on macOS too: every Linux-only (Glibc) API is used inside `#if canImport(Glibc)`.
/// This machine cannot build for macOS, so the sources are checked as text.
@Suite("Platform guards")
struct PlatformGuardTests {
    /// Spellings that exist only in Glibc (or only spelled so there).
    static let linuxOnly = ["Glibc.", "import Glibc", "MSG_NOSIGNAL", "SOCK_STREAM.rawValue", "Int32(SOCK_STREAM"]

    @Test func linuxOnlyCallsAreGuardedByCanImportGlibc() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        #expect(files.count > 50, "found the sources at \(sources.path)")
        var unguarded: [String] = []
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            unguarded += Self.unguardedLines(text).map { "\(file):\($0)" }
        }
        #expect(unguarded.isEmpty, "outside #if canImport(Glibc): \(unguarded)")
    }

    @Test func theCheckSeesAnUnguardedCall() {
        let text = "#if canImport(Glibc)\nimport Glibc\n#else\nGlibc.close(fd)\n#endif\nGlibc.send(fd, p, n, Int32(MSG_NOSIGNAL))\n"
        #expect(Self.unguardedLines(text) == [4, 6])
    }

    /// The 1-based numbers of the lines using a Linux-only spelling outside an active `canImport(Glibc)` branch.
    static func unguardedLines(_ text: String) -> [Int] {
        var conditions: [String] = []
        var found: [Int] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#if ") {
                conditions.append(String(line.dropFirst(4)))
            } else if line.hasPrefix("#elseif ") {
                if !conditions.isEmpty { conditions[conditions.count - 1] = String(line.dropFirst(8)) }
            } else if line.hasPrefix("#else") {
                if !conditions.isEmpty { conditions[conditions.count - 1] = "else" }
            } else if line.hasPrefix("#endif") {
                _ = conditions.popLast()
            } else if !line.hasPrefix("//"), linuxOnly.contains(where: { line.contains($0) }),
                      !conditions.contains(where: { $0.contains("canImport(Glibc)") && !$0.hasPrefix("!") }) {
                found.append(index + 1)
            }
        }
        return found
    }
}

import CaravanCore
import CaravanPostgres
import CaravanSQL
import CaravanSQLite
import CaravanTesting
import Foundation
import Testing

/// `caravan new NAME` writes `Examples/Notes` renamed: the example is what the main package builds, tests
/// (`NotesTests`) and serves (`OwnAppTests`), so `caravan new Notes` must write exactly its files — frozen migrations
/// included — and another name the same package with every "Notes"/"notes" renamed.
@Suite struct ScaffoldTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/Notes")

    /// Every file under `root` (not `.build`), by its relative path.
    static func files(under root: URL) throws -> [String: String] {
        var files: [String: String] = [:]
        for case let path as String in FileManager.default.enumerator(atPath: root.path) ?? FileManager.DirectoryEnumerator() {
            guard !path.hasPrefix(".build"), !path.hasPrefix(".swiftpm") else { continue }
            var isDirectory: ObjCBool = false
            let url = root.appendingPathComponent(path)
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            files[path] = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        }
        return files
    }

    @Test func newNotesIsTheExampleFileForFile() async throws {
        let out = temporaryDirectory()
        let (status, said, complaint) = try await CaravanBinary().run(["new", "Notes", "--path", out, "--caravan-path", "../.."])
        #expect(status == 0, "\(complaint)")
        #expect(said.hasPrefix("created \(out)/Notes\n") && said.contains("swift run caravan-notes serve"))
        let written = try Self.files(under: URL(fileURLWithPath: out).appendingPathComponent("Notes"))
        let example = try Self.files(under: Self.example)
        #expect(written.keys.sorted() == example.keys.sorted())
        for (path, text) in example { #expect(written[path] == text, "\(path) differs from Examples/Notes") }
        #expect(written["Sources/Notes/Migrations/postgres/notes-0001-create.sql"]?.contains(#"CREATE TABLE "notes""#) == true)
    }

    @Test func anotherNameRenamesTheModuleTableBinaryAndTestsAndTheManifestParses() async throws {
        let out = temporaryDirectory()
        let (status, _, complaint) = try await CaravanBinary().run(["new", "Tasks", "--path", out])
        #expect(status == 0, "\(complaint)")
        let root = URL(fileURLWithPath: out).appendingPathComponent("Tasks")
        let written = try Self.files(under: root)
        #expect(written.keys.sorted() == [".gitignore", "Package.swift", "README.md", "Sources/Tasks/Migrations/postgres/tasks-0001-create.sql",
                                          "Sources/Tasks/Migrations/sqlite/tasks-0001-create.sql", "Sources/Tasks/TasksModule.swift",
                                          "Sources/caravan-tasks/main.swift", "Tests/TasksTests/TasksPolicyTests.swift"])
        #expect(!written.values.contains { $0.contains("notes") || $0.contains("Notes") }, "nothing of the example's names is left")
        #expect(written["Sources/Tasks/TasksModule.swift"]?.contains(#"public static let tasks = TableSchema("#) == true)
        #expect(written["Sources/Tasks/Migrations/sqlite/tasks-0001-create.sql"]?.contains(#""tasks_title_not_blank""#) == true)
        // The renamed frozen files are what the renamed declarations render (an oracle beside the renaming).
        let tasks = TableSchema("tasks", columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID), Column("owner", .uuid, nullable: false), Column("title", .text, nullable: false),
            Column("body", .text), Column("pinned", .boolean, nullable: false, default: .value(.bool(false))),
            Column("created_at", .timestamp, nullable: false, default: .now),
        ], primaryKey: ["id"], checks: [CheckConstraint("tasks_title_not_blank", .column("title", .neq, ""))],
           indexes: [Index("idx_tasks_owner_created", [IndexKey("owner"), IndexKey("created_at", descending: true)])], synced: true, owner: "owner")
        #expect(written["Sources/Tasks/Migrations/sqlite/tasks-0001-create.sql"] == (try SQLSchema<SQLiteSyntax>.render([.createTable(tasks)])))
        #expect(written["Sources/Tasks/Migrations/postgres/tasks-0001-create.sql"] == (try SQLSchema<PostgresSyntax>.render([.createTable(tasks)])))
        // By default the package names Caravan's repository, from this binary's version.
        #expect(written["Package.swift"]?.contains(#".package(url: "https://github.com/caravan-swift/caravan.git", from: "0.1.0")"#) == true)

        // SwiftPM reads the manifest (without fetching anything): its targets are the module, the binary and the tests.
        let dump = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["swift", "package", "dump-package"], in: root)
        let manifest = dump.stdout
        #expect(dump.status == 0)
        let targets = try JSONParser.parse(manifest)["targets"]
        guard case .array(let list)? = targets else { Issue.record("no targets in \(manifest.prefix(300))"); return }
        #expect(list.compactMap { target -> String? in if case .string(let name)? = target["name"] { name } else { nil } }.sorted()
                == ["Tasks", "TasksTests", "caravan-tasks"])
    }

    @Test func aBadNameOrAFolderInUseIsRefusedAndNothingIsOverwritten() async throws {
        let out = temporaryDirectory()
        for bad in ["9lives", "my-app", "تطبيق", String(repeating: "a", count: 41)] {
            let (status, _, complaint) = try await CaravanBinary().run(["new", bad, "--path", out])
            #expect(status != 0 && complaint.contains("use 1 to 40 letters and digits"), "\(bad): \(complaint)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).isEmpty, "a refused name creates nothing")
        let mine = URL(fileURLWithPath: out).appendingPathComponent("Tasks")
        try FileManager.default.createDirectory(at: mine, withIntermediateDirectories: true)
        try Data("mine\n".utf8).write(to: mine.appendingPathComponent("README.md"))
        let (status, _, complaint) = try await CaravanBinary().run(["new", "Tasks", "--path", out])
        #expect(status != 0 && complaint.contains("\(mine.path) exists and is not empty"), "\(complaint)")
        #expect(try String(contentsOf: mine.appendingPathComponent("README.md"), encoding: .utf8) == "mine\n")
    }
}

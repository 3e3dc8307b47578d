import CaravanTesting
import Foundation
import Testing

/// Outside this package (a user's own app, as `Examples/Notes` is), writes go through
/// `WritePipeline` only. The raw transaction, its driver and the bulk loader are `package`, and a raw
/// `Store.transaction` needs a `TransactionGrant` nobody outside can make. Checked by type-checking code written
/// outside the package against the modules this build made, with the compiler that made them.
@Suite struct SealedWritePathTests {
    static let modules = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("Modules").path

    /// Type-checks `source` as a file of another package; returns (exit status, compiler errors).
    static func typecheck(_ source: String) async throws -> (Int32, String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("outside-\(UUID().uuidString).swift")
        try Data(("import CaravanCore\n" + source).utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let outcome = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                                 ["swiftc", "-typecheck", "-swift-version", "6", "-I", modules, file.path])
        return (outcome.status, outcome.stderr)
    }

    @Test func anOutsideAppWritesThroughThePipelineAndReadsThroughReadOnly() async throws {
        let (status, errors) = try await Self.typecheck("""
            func write(_ store: any Store, _ access: AccessContext, _ table: TableSchema) async throws {
                let pipeline = WritePipeline(store: store, publisher: ChangePublisher())
                _ = try await pipeline.run(access) { tx in try await tx.insert([], into: table, conflict: nil) }
                _ = try await store.readOnly(access) { tx in try await tx.changeLogHead() }
            }
            """)
        #expect(status == 0, "the public write path must stay usable: \(errors)")
    }

    @Test(arguments: [
        ("_ = try await store.transaction(access, rollback: false, grant: TransactionGrant()) { _ in 1 }", "inaccessible due to 'package' protection level"),
        ("let _: (any TransactionDriver)? = nil", "cannot find type 'TransactionDriver' in scope"),
        ("let _: PipelineTransaction? = nil", "cannot find type 'PipelineTransaction' in scope"),
        ("let _: (any BulkLoadingStore)? = nil", "cannot find type 'BulkLoadingStore' in scope"),
    ])
    func theRawWritePathIsOutOfReach(statement: String, expected: String) async throws {
        let (status, errors) = try await Self.typecheck("""
            func bypass(_ store: any Store, _ access: AccessContext) async throws {
                \(statement)
            }
            """)
        #expect(status != 0)
        #expect(errors.contains(expected), "\(errors)")
    }
}

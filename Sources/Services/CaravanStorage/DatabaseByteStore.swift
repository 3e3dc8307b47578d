package import CaravanCore
package import Foundation

/// Object bytes in the deployment's database (`storage_object_chunks`): chunks of `chunkSize` bytes, base64, written
/// in one transaction through the write pipeline (the table is secret: never in the change log), so a version's
/// chunks are all visible or none is, on every instance that shares the database.
package struct DatabaseByteStore: ObjectByteStore {
    /// 1 MiB per row.
    package static let chunkSize = 1 << 20

    let pipeline: WritePipeline
    let catalog: Catalog

    package init(pipeline: WritePipeline, catalog: Catalog) {
        self.pipeline = pipeline
        self.catalog = catalog
    }

    private var serviceAccess: AccessContext { catalog.access(for: .serviceRole) }

    package func write(_ bytes: Data, version: ObjectVersion) async throws {
        let table = StorageSchema.chunks
        var rows: [RowValues] = []
        var offset = bytes.startIndex
        var index: Int64 = 0
        repeat {
            let end = min(offset + Self.chunkSize, bytes.endIndex)
            rows.append(RowValues(["version": .text(version.id), "chunk_index": .integer(index), "data": .text(bytes[offset..<end].base64EncodedString())]))
            offset = end
            index += 1
        } while offset < bytes.endIndex
        let chunks = rows
        try await pipeline.run(serviceAccess) { tx in
            for row in chunks { try await tx.insertBookkeeping(row, into: table) }
        }
    }

    package func read(_ version: ObjectVersion) async throws -> Data? {
        let table = StorageSchema.chunks
        let query = Query(select: [.column(name: "chunk_index", alias: nil, cast: nil), .column(name: "data", alias: nil, cast: nil)],
                          order: [OrderTerm(column: "chunk_index")])
        let plan = try ReadPlan(table: table, query: query, access: try table.equals("version", .text(version.id)), maxRows: nil, includeCount: false)
        let rows = try await pipeline.store.fetch(plan).rows
        guard !rows.isEmpty else { return nil }
        var bytes = Data()
        for (expected, row) in rows.enumerated() {
            guard row.count == 2, row[0].integerValue == Int64(expected), let text = row[1].textValue, let chunk = Data(base64Encoded: text) else {
                throw StorageError(.internalError, "Internal Server Error", internalDetail: "object chunk \(expected) of \(version) is damaged")
            }
            bytes.append(chunk)
        }
        return bytes
    }

    package func remove(_ versions: [ObjectVersion]) async throws {
        guard !versions.isEmpty else { return }
        let filter = try StorageSchema.chunks.isIn("version", versions.map(\.id))
        try await pipeline.run(serviceAccess) { tx in
            _ = try await tx.delete(from: StorageSchema.chunks, where: filter)
        }
    }
}

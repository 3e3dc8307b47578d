package import CaravanCore
import Foundation
import Logging

extension StorageService {
    /// The buckets `identity` may see (the service role: all; without bucket policies, others see none).
    package func listBuckets(as identity: Identity) async throws(StorageError) -> [Bucket] {
        try await rows(StorageSchema.buckets, where: .constant(true), as: identity, order: [OrderTerm(column: "name")])
            .map { row throws(StorageError) in try Bucket(row: row) }
    }

    /// The bucket `id` as `identity` sees it, or `noSuchBucket`.
    package func bucket(_ id: String, as identity: Identity) async throws(StorageError) -> Bucket {
        let filter = try Self.equals(StorageSchema.buckets, "id", .text(id))
        guard let row = try await rows(StorageSchema.buckets, where: filter, as: identity, limit: 1).first else { throw StorageError.noSuchBucket() }
        return try Bucket(row: row)
    }

    /// The bucket's configuration, read as the service role (limits apply whoever uploads).
    func bucketConfiguration(_ id: String) async throws(StorageError) -> Bucket {
        try await bucket(id, as: .serviceRole)
    }

    /// Creates bucket `id` (its name is its id). Duplicates are `bucketAlreadyExists`.
    package func createBucket(_ id: String, settings: BucketSettings, as identity: Identity) async throws(StorageError) {
        try ObjectKey.validateBucket(id)
        var row = RowValues(["id": .text(id), "name": .text(id), "public": .bool(settings.isPublic ?? false)])
        try Self.apply(settings, to: &row)
        let values = row
        try await write(as: identity, duplicate: .bucketAlreadyExists) { tx in
            _ = try await tx.insert([values], into: StorageSchema.buckets, conflict: nil)
        }
    }

    /// Changes the bucket's settings; `noSuchBucket` when `identity` cannot update it.
    package func updateBucket(_ id: String, settings: BucketSettings, as identity: Identity) async throws(StorageError) {
        var row = RowValues(columns: [], values: [])
        if let isPublic = settings.isPublic { row.append("public", .bool(isPublic)) }
        try Self.apply(settings, to: &row)
        let values = row, filter = try Self.equals(StorageSchema.buckets, "id", .text(id))
        let updated = try await write(as: identity) { tx in
            try await tx.update(StorageSchema.buckets, set: values, where: filter).updated
        }
        if updated == 0 { _ = try await bucket(id, as: identity) }
    }

    static func apply(_ settings: BucketSettings, to row: inout RowValues) throws(StorageError) {
        if let limit = settings.fileSizeLimit {
            if let limit, limit < 0 { throw StorageError(.invalidRequest, "file_size_limit must not be negative") }
            row.append("file_size_limit", limit.map(Value.integer) ?? .null)
        }
        if let types = settings.allowedMimeTypes {
            row.append("allowed_mime_types", types.map { list in .json(JSONValue.array(list.map(JSONValue.string)).jsonText) } ?? .null)
        }
    }

    /// Deletes every object of the bucket that `identity` may delete, and their bytes.
    package func emptyBucket(_ id: String, as identity: Identity) async throws(StorageError) {
        _ = try await bucket(id, as: identity)
        let filter = try Self.equals(StorageSchema.objects, "bucket_id", .text(id))
        let removed = try await write(as: identity) { tx in
            try await tx.delete(from: StorageSchema.objects, where: filter).rows.map { StoredRow(table: StorageSchema.objects, values: $0) }
        }
        await discard(removed.compactMap { $0.text("version").flatMap(ObjectVersion.init) })
    }

    /// Deletes an empty bucket (`bucketNotEmpty` otherwise, as Supabase).
    package func deleteBucket(_ id: String, as identity: Identity) async throws(StorageError) {
        _ = try await bucket(id, as: identity)
        let objectFilter = try Self.equals(StorageSchema.objects, "bucket_id", .text(id))
        if try await !rows(StorageSchema.objects, where: objectFilter, as: .serviceRole, limit: 1).isEmpty {
            throw StorageError(.bucketNotEmpty, "The bucket you tried to delete is not empty")
        }
        let filter = try Self.equals(StorageSchema.buckets, "id", .text(id))
        let deleted = try await write(as: identity) { tx in try await tx.delete(from: StorageSchema.buckets, where: filter).deleted }
        if deleted == 0 { throw StorageError(.accessDenied, "new row violates row-level security policy") }
    }

    /// Creates each declared bucket that does not exist yet, as the service role (an existing one keeps the
    /// settings its operator gave it).
    package func createDeclaredBuckets(_ declarations: [BucketDeclaration]) async throws(StorageError) {
        for declaration in declarations {
            let filter = try Self.equals(StorageSchema.buckets, "id", .text(declaration.id))
            guard try await rows(StorageSchema.buckets, where: filter, as: .serviceRole, limit: 1).isEmpty else { continue }
            let settings = BucketSettings(isPublic: declaration.isPublic, fileSizeLimit: .some(declaration.fileSizeLimit),
                                          allowedMimeTypes: .some(declaration.allowedMimeTypes))
            do {
                try await createBucket(declaration.id, settings: settings, as: .serviceRole)
            } catch where error.code == .bucketAlreadyExists {
                continue  // another instance created it meanwhile
            }
            logger.info("storage bucket created", metadata: ["storage.bucket": .string(declaration.id)])
        }
    }
}

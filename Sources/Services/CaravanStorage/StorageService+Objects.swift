package import CaravanCore
import Crypto
package import Foundation
import Logging

extension StorageService {
    /// Stores an upload as object `name` of `bucket`: checked against the bucket's size limit and allowed MIME types
    /// (on the bytes), written durably under a new version, then its metadata row inserted — or, with `upsert`,
    /// the existing row updated (the owner's policy decides) — through the write pipeline. A refused upload leaves
    /// nothing behind; a replaced version's bytes are removed after the commit.
    package func upload(_ upload: ObjectUpload, bucket: String, name: String, upsert: Bool, as identity: Identity) async throws(StorageError) -> StoredObject {
        try ObjectKey.validate(name)
        let configuration = try await bucketConfiguration(bucket)
        let contentType = try checked(upload, in: configuration)
        let version = ObjectVersion.make()
        do {
            try await bytes.write(upload.bytes, version: version)
        } catch {
            throw logged(StorageError.from(error))
        }
        var row = RowValues([
            "version": .text(version.id), "size": .integer(Int64(upload.bytes.count)), "etag": .text(Self.etag(upload.bytes)),
            "content_type": .text(contentType), "cache_control": upload.cacheControl.map(Value.text) ?? .null,
            "user_metadata": upload.userMetadata.map { .json($0.jsonText) } ?? .null,
        ])
        do {
            let (stored, replaced) = try await put(&row, bucket: bucket, name: name, upsert: upsert, as: identity)
            if let replaced { await discard([replaced]) }
            return stored
        } catch {
            await discard([version])
            throw error
        }
    }

    /// Inserts the row of `name`, or updates the existing one when `upsert`; returns it and the version it replaced.
    /// With `dryRun` nothing is kept (the transaction rolls back): it only checks that the write would pass.
    func put(_ row: inout RowValues, bucket: String, name: String, upsert: Bool,
             as identity: Identity, dryRun: Bool = false) async throws(StorageError) -> (StoredObject, ObjectVersion?) {
        let table = StorageSchema.objects
        let match = BoundPredicate.and([try Self.equals(table, "bucket_id", .text(bucket)), try Self.equals(table, "name", .text(name))])
        let values = row
        let accessed = Value.text(Timestamp.format(microseconds: now() * 1_000_000))
        let (stored, old) = try await write(as: identity, dryRun: dryRun) { tx -> ([Value], [Value]?) in
            // Writes of one object name run one after the other: an upsert replaces the version it read.
            try await tx.serialize(on: "storage.object:\(bucket)/\(name)")
            let existing = try await tx.asServiceRole { try await $0.rows(table, table.columns.map(\.name), where: match, limit: 1).first }
            guard let existing else {
                var insert = values
                insert.append("bucket_id", .text(bucket))
                insert.append("name", .text(name))
                guard let new = try await tx.insert([insert], into: table, conflict: nil).rows.first else { throw CaravanError(.notFound, "Object not found") }
                return (new, nil)
            }
            // Errors thrown inside a transaction are Caravan's (a store passes nothing else through); `write` maps them.
            guard upsert else { throw CaravanError(.uniqueViolation, "The resource already exists") }
            var update = values
            update.append("last_accessed_at", accessed)
            guard let new = try await tx.update(table, set: update, where: match).rows.first else {
                throw CaravanError(.permissionDenied, "new row violates row-level security policy")
            }
            return (new, existing)
        }
        let object = try StoredObject(row: StoredRow(table: table, values: stored))
        let replaced = try old.map { values throws(StorageError) in try StoredObject(row: StoredRow(table: table, values: values)).version }
        return (object, replaced)
    }

    /// The content type to store, after the bucket's checks: size first, then the type the bytes show.
    func checked(_ upload: ObjectUpload, in bucket: Bucket) throws(StorageError) -> String {
        let limit = min(bucket.fileSizeLimit ?? maxFileSize, maxFileSize)
        guard Int64(upload.bytes.count) <= limit else { throw StorageError.tooLarge() }
        let effective = MimeSniffer.effectiveType(claimed: upload.contentType, bytes: upload.bytes)
        guard MimeSniffer.isAllowed(effective, by: bucket.allowedMimeTypes) else {
            throw StorageError(.invalidMimeType, "mime type \(effective) is not supported")
        }
        if let claimed = upload.contentType, MimeSniffer.baseType(claimed) == effective { return claimed }
        return effective
    }

    /// `"<md5 hex>"`.
    package static func etag(_ bytes: Data) -> String {
        "\"" + Insecure.MD5.hash(data: bytes).map { String(format: "%02x", $0) }.joined() + "\""
    }

    /// The object and its bytes, as `identity` may read them (`noSuchKey` otherwise). Reads again once when an
    /// upsert replaced the object between the row and its bytes.
    package func download(bucket: String, name: String, as identity: Identity) async throws(StorageError) -> (StoredObject, Data) {
        for _ in 0..<3 {
            let object = try await requireObject(bucket, name, as: identity)
            let data: Data?
            do {
                data = try await bytes.read(object.version)
            } catch {
                throw logged(StorageError.from(error))
            }
            if let data { return (object, data) }
        }
        throw logged(StorageError(.internalError, "Internal Server Error", internalDetail: "object bytes missing for a listed object"))
    }

    /// An object of a public bucket, for anyone (`noSuchBucket` when the bucket is not public).
    package func publicDownload(bucket: String, name: String) async throws(StorageError) -> (StoredObject, Data) {
        guard try await bucketConfiguration(bucket).isPublic else { throw StorageError.noSuchBucket() }
        return try await download(bucket: bucket, name: name, as: .serviceRole)
    }

    /// The metadata of an object `identity` may read.
    package func info(bucket: String, name: String, as identity: Identity) async throws(StorageError) -> StoredObject {
        try await requireObject(bucket, name, as: identity)
    }
}

package import CaravanCore
package import Foundation
import Logging

extension StorageService {
    /// Renames object `from` to `to` in `bucket` (one update of its row: the bytes stay). `noSuchKey` when the caller
    /// cannot update the source; `keyAlreadyExists` when the destination exists.
    package func move(bucket: String, from: String, to: String, as identity: Identity) async throws(StorageError) {
        try ObjectKey.validate(to)
        let table = StorageSchema.objects
        let source = BoundPredicate.and([try Self.equals(table, "bucket_id", .text(bucket)), try Self.equals(table, "name", .text(from))])
        let target = BoundPredicate.and([try Self.equals(table, "bucket_id", .text(bucket)), try Self.equals(table, "name", .text(to))])
        let moved = try await write(as: identity) { tx in
            if try await tx.asServiceRole({ try await $0.count(table, where: target) }) > 0 {
                throw CaravanError(.uniqueViolation, "The resource already exists")  // inside a transaction: Caravan's errors only
            }
            return try await tx.update(table, set: RowValues(["name": .text(to)]), where: source).updated
        }
        if moved == 0 { throw StorageError.noSuchKey() }
    }

    /// Copies object `from` to `to` in `bucket`: new bytes (a version of their own) and a row owned by the caller.
    package func copy(bucket: String, from: String, to: String, upsert: Bool, as identity: Identity) async throws(StorageError) -> StoredObject {
        try ObjectKey.validate(to)
        let (source, data) = try await download(bucket: bucket, name: from, as: identity)
        let version = ObjectVersion.make()
        do {
            try await bytes.write(data, version: version)
        } catch {
            throw logged(StorageError.from(error))
        }
        var row = RowValues([
            "version": .text(version.id), "size": .integer(source.size), "etag": .text(source.etag), "content_type": .text(source.contentType),
            "cache_control": source.cacheControl.map(Value.text) ?? .null, "user_metadata": source.userMetadata.map(Value.json) ?? .null,
        ])
        do {
            let (stored, replaced) = try await put(&row, bucket: bucket, name: to, upsert: upsert, as: identity)
            if let replaced { await discard([replaced]) }
            return stored
        } catch {
            await discard([version])
            throw error
        }
    }

    /// Deletes the objects of `names` that the caller may delete (others are passed over, as Supabase does) and
    /// their bytes; returns the deleted objects.
    package func remove(bucket: String, names: [String], as identity: Identity) async throws(StorageError) -> [StoredObject] {
        guard !names.isEmpty else { return [] }
        _ = try await bucketConfiguration(bucket)
        let table = StorageSchema.objects
        let filter: BoundPredicate
        do {
            filter = .and([try table.equals("bucket_id", .text(bucket)), try table.isIn("name", names)])
        } catch {
            throw StorageError.from(error)
        }
        let removed = try await write(as: identity) { tx in
            try await tx.delete(from: table, where: filter).rows
        }
        let objects = try removed.map { values throws(StorageError) in try StoredObject(row: StoredRow(table: table, values: values)) }
        await discard(objects.map(\.version))
        return objects
    }

    // MARK: Signed URLs

    /// A token for `GET /object/sign/{bucket}/{name}?token=…`, valid `expiresIn` seconds, for an object the caller
    /// may read (`noSuchKey` otherwise).
    package func signURL(bucket: String, name: String, expiresIn: Int64, as identity: Identity) async throws(StorageError) -> String {
        guard expiresIn >= 1 else { throw StorageError(.invalidRequest, "expiresIn must be a positive number of seconds") }
        _ = try await requireObject(bucket, name, as: identity)
        return try await signedToken(bucket: bucket, name: name, issued: now(), expiresIn: expiresIn)
    }

    /// The token of a signed URL for `bucket/name`, issued at `issued` (seconds since 1970), valid `expiresIn` seconds;
    /// with `transformations` (storage-api's claim, `ImageTransform.claim`), a link to a render of it.
    func signedToken(bucket: String, name: String, issued: Int64, expiresIn: Int64, transformations: String? = nil) async throws(StorageError) -> String {
        var claims: [(key: String, value: JSONValue)] = [("url", .string("\(bucket)/\(name)")), ("iat", .integer(issued)), ("exp", .integer(issued + expiresIn))]
        if let transformations { claims.append(("transformations", .string(transformations))) }
        do {
            return try await signer.sign(.object(claims))
        } catch {
            throw logged(StorageError.from(error))
        }
    }

    /// The object a signed URL's token names, with its bytes: the token must be valid, unexpired, a download token
    /// (an upload token has a `purpose`) and for exactly this object.
    package func signedDownload(bucket: String, name: String, token: String) async throws(StorageError) -> (StoredObject, Data) {
        _ = try await downloadClaims(bucket: bucket, name: name, token: token)
        return try await download(bucket: bucket, name: name, as: .serviceRole)
    }

    /// The claims of a download token for exactly `bucket/name`: valid, unexpired, not an upload token.
    func downloadClaims(bucket: String, name: String, token: String) async throws(StorageError) -> JSONValue {
        let claims = try await signer.verify(token)
        guard case .string(let url)? = claims["url"], url == "\(bucket)/\(name)", claims["purpose"] == nil else {
            throw StorageError(.invalidSignature, "The token is for another object")
        }
        return claims
    }
}

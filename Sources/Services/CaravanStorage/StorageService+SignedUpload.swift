package import CaravanCore
import Foundation

extension StorageService {
    /// How long a signed upload URL works: two hours, as Supabase Storage's default.
    package static let signedUploadLifetime: Int64 = 7200

    /// A token for `PUT /object/upload/sign/{bucket}/{name}?token=…`: whoever holds it may upload that one object,
    /// without a key, for `signedUploadLifetime` seconds. The caller must be allowed to write the object now — the
    /// write is tried under the caller's policies and rolled back (a user may not sign into another user's object;
    /// without `upsert`, an existing object is `keyAlreadyExists`). The token names the caller as the future owner
    /// and says whether it may replace; it is an upload token only (`purpose: upload`), never a download link.
    package func signUpload(bucket: String, name: String, upsert: Bool, as identity: Identity) async throws(StorageError) -> String {
        try ObjectKey.validate(name)
        _ = try await bucketConfiguration(bucket)
        var probe = RowValues([
            "version": .text(ObjectVersion.make().id), "size": .integer(0), "etag": .text(Self.etag(Data())),
            "content_type": .text("application/octet-stream"),
        ])
        _ = try await put(&probe, bucket: bucket, name: name, upsert: upsert, as: identity, dryRun: true)
        let issued = now()
        var claims: [(key: String, value: JSONValue)] = [
            ("url", .string("\(bucket)/\(name)")), ("purpose", .string(Self.uploadPurpose)), ("upsert", .bool(upsert)),
            ("iat", .integer(issued)), ("exp", .integer(issued + Self.signedUploadLifetime)),
        ]
        if let owner = identity.userID { claims.append(("owner", .string(owner))) }
        do {
            return try await signer.sign(.object(claims))
        } catch {
            throw logged(StorageError.from(error))
        }
    }

    /// Stores `upload` through a signed upload URL's token: valid, unexpired, an upload token for exactly this
    /// object. The write runs as the token's owner (the service role when the service role signed), so the object's
    /// policies are checked again, and it replaces an existing object only when the token allows it.
    package func signedUpload(_ upload: ObjectUpload, bucket: String, name: String, token: String) async throws(StorageError) -> StoredObject {
        let claims = try await signer.verify(token)
        guard case .string(Self.uploadPurpose)? = claims["purpose"], case .string(let url)? = claims["url"], url == "\(bucket)/\(name)" else {
            throw StorageError(.invalidSignature, "The token is not an upload token for this object")
        }
        let identity: Identity = if case .string(let owner)? = claims["owner"] { Identity(role: .authenticated, userID: owner) } else { .serviceRole }
        return try await self.upload(upload, bucket: bucket, name: name, upsert: claims["upsert"] == .bool(true), as: identity)
    }

    /// The `purpose` claim of an upload token (download tokens have none).
    static let uploadPurpose = "upload"
}

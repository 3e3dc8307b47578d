package import CaravanCore
package import Foundation

extension StorageService: UserExportFiles {
    /// The objects `userID` owns in every bucket (bucket, then name order), each with a signed URL valid
    /// `linkLifetime` seconds — what a per-user export (`export_my_data`, `caravan export user`) lists. Read as the
    /// service role with the owner as the only filter: the owner's objects in every bucket, public or private, and
    /// nobody else's.
    package func exportFiles(of userID: String, linkLifetime: Int64) async throws -> [UserExport.File] {
        guard linkLifetime >= 1 else { throw StorageError(.invalidRequest, "expiresIn must be a positive number of seconds") }
        let table = StorageSchema.objects
        let mine = try Self.equals(table, "owner", .text(userID))
        let objects = try await rows(table, where: mine, as: .serviceRole, order: [OrderTerm(column: "bucket_id"), OrderTerm(column: "name")])
            .map { row throws(StorageError) in try StoredObject(row: row) }
        let issued = now()
        let expiresAt = Timestamp.format(microseconds: (issued + linkLifetime) * 1_000_000)
        var files: [UserExport.File] = []
        for object in objects {
            let token = try await signedToken(bucket: object.bucketID, name: object.name, issued: issued, expiresIn: linkLifetime)
            files.append(UserExport.File(bucket: object.bucketID, name: object.name, size: object.size, contentType: object.contentType,
                                         updatedAt: object.updatedAt, signedURL: "/storage/v1" + Self.signedPath(bucket: object.bucketID, name: object.name, token: token),
                                         expiresAt: expiresAt))
        }
        return files
    }

    /// `/object/sign/{bucket}/{key}?token=…` (relative to `/storage/v1`), each key segment percent-encoded; `route`
    /// `/object/upload/sign/` for a signed upload URL.
    package static func signedPath(bucket: String, name: String, token: String, route: String = "/object/sign/") -> String {
        let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#%"))
        let encoded = ([bucket] + name.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
            .map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0 }.joined(separator: "/")
        return "\(route)\(encoded)?token=\(token)"
    }
}

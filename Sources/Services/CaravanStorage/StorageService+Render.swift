package import CaravanCore
import Foundation

extension StorageService {
    /// A render of object `name` of `bucket` as `identity` may read it (the download's policies; `noSuchKey`
    /// otherwise). Reads again once when an upsert replaced the object between its row and its bytes.
    package func render(bucket: String, name: String, transform: ImageTransform, acceptsWebP: Bool,
                        as identity: Identity) async throws(StorageError) -> (StoredObject, RenderedImage) {
        _ = try images.renderer.get()  // off: say so before anything else
        for _ in 0..<3 {
            let object = try await requireObject(bucket, name, as: identity)
            do throws(StorageError) {
                let image = try await images.render(object, transform, acceptsWebP: acceptsWebP, logger: logger) { () async throws(StorageError) -> Data in
                    let data: Data?
                    do {
                        data = try await bytes.read(object.version)
                    } catch {
                        throw logged(StorageError.from(error))
                    }
                    guard let data else { throw StorageError(.noSuchKey, "Object not found", internalDetail: Self.replacedDetail) }
                    return data
                }
                return (object, image)
            } catch let error where error.internalDetail == Self.replacedDetail {
                continue
            }
        }
        throw logged(StorageError(.internalError, "Internal Server Error", internalDetail: "object bytes missing for a listed object"))
    }

    private static let replacedDetail = "the object's bytes were replaced while it was read"

    /// A render of an object of a public bucket, for anyone (`noSuchBucket` when the bucket is not public).
    package func publicRender(bucket: String, name: String, transform: ImageTransform,
                              acceptsWebP: Bool) async throws(StorageError) -> (StoredObject, RenderedImage) {
        _ = try images.renderer.get()
        guard try await bucketConfiguration(bucket).isPublic else { throw StorageError.noSuchBucket() }
        return try await render(bucket: bucket, name: name, transform: transform, acceptsWebP: acceptsWebP, as: .serviceRole)
    }

    /// The render a signed URL's token names (`/render/image/sign/…?token=…`): a download token for exactly this
    /// object, whose `transformations` claim says the transform (none: the whole image re-encoded).
    package func signedRender(bucket: String, name: String, token: String, acceptsWebP: Bool) async throws(StorageError) -> (StoredObject, RenderedImage) {
        _ = try images.renderer.get()
        let claims = try await downloadClaims(bucket: bucket, name: name, token: token)
        let transform: ImageTransform = if case .string(let text)? = claims["transformations"] { ImageTransform(claim: text) } else { ImageTransform() }
        return try await render(bucket: bucket, name: name, transform: transform, acceptsWebP: acceptsWebP, as: .serviceRole)
    }

    /// A signed URL (relative to `/storage/v1`) for an object the caller may read, valid `expiresIn` seconds: a render
    /// (`/render/image/sign/…`, the transform in the token, as storage-api signs it) when `transform` asks for one and
    /// transformations are on, a download (`/object/sign/…`) otherwise — storage-api also signs a plain download
    /// when its transformations are off.
    package func signedURL(bucket: String, name: String, expiresIn: Int64, transform: ImageTransform?,
                           as identity: Identity) async throws(StorageError) -> String {
        guard let transform, !transform.isEmpty, images.isAvailable else {
            let token = try await signURL(bucket: bucket, name: name, expiresIn: expiresIn, as: identity)
            return Self.signedPath(bucket: bucket, name: name, token: token)
        }
        guard expiresIn >= 1 else { throw StorageError(.invalidRequest, "expiresIn must be a positive number of seconds") }
        _ = try await requireObject(bucket, name, as: identity)
        let token = try await signedToken(bucket: bucket, name: name, issued: now(), expiresIn: expiresIn, transformations: transform.claim)
        return Self.signedPath(bucket: bucket, name: name, token: token, route: "/render/image/sign/")
    }
}

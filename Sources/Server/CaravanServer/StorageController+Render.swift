import CaravanCore
import CaravanStorage
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/render/image/{public|authenticated|sign}/{bucket}/{key}`: storage-api's image transformations (GET and HEAD),
/// under the same access as the matching download — a public bucket's objects for anyone, the caller's policies,
/// or a signed URL's token (which carries the transform).
extension StorageController {
    func renderRoute(_ request: Request, _ context: CaravanRequestContext, _ rest: [String]) async throws -> Response {
        guard request.method == .get || request.method == .head, rest.count >= 4, rest[0] == "image" else {
            throw StorageError(.invalidRequest, "Route \(request.method.rawValue):/render/\(rest.first ?? "") not found")
        }
        let bucket = rest[2], name = Self.key(rest, from: 3)
        let query = request.uri.queryParameters
        let acceptsWebP = Self.acceptsWebP(request.headers[.accept])
        let found: (StoredObject, RenderedImage)
        switch rest[1] {
        case "public":
            let transform = try ImageTransform { query[Substring($0)].map(String.init) }
            found = try await storage.publicRender(bucket: bucket, name: name, transform: transform, acceptsWebP: acceptsWebP)
        case "authenticated":
            let transform = try ImageTransform { query[Substring($0)].map(String.init) }
            found = try await storage.render(bucket: bucket, name: name, transform: transform, acceptsWebP: acceptsWebP,
                                             as: try Self.identity(context))
        case "sign":
            guard let token = query["token"].map(String.init) else { throw StorageError(.invalidRequest, "querystring must have required property 'token'") }
            found = try await storage.signedRender(bucket: bucket, name: name, token: token, acceptsWebP: acceptsWebP)
        default:
            throw StorageError(.invalidRequest, "Route \(request.method.rawValue):/render/image/\(rest[1]) not found")
        }
        return rendered(request, found)
    }

    /// Whether an `Accept` header names WebP (`image/webp`, with a non-zero quality), which picks WebP for a render
    /// that names no format, as Supabase's renderer does.
    static func acceptsWebP(_ accept: String?) -> Bool {
        guard let accept else { return false }
        return accept.split(separator: ",").contains { item in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.first == "image/webp" else { return false }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return quality > 0
        }
    }

    /// The render with a download's headers: its own type, length and ETag, the object's `Cache-Control` and
    /// `Last-Modified`, the sandbox policy, and `Content-Disposition` for `?download`.
    private func rendered(_ request: Request, _ found: (StoredObject, RenderedImage)) -> Response {
        let (object, image) = found
        var headers: HTTPFields = [
            .contentType: image.format.contentType, .contentLength: String(image.bytes.count), .eTag: StorageService.etag(image.bytes),
            .cacheControl: "max-age=\(object.cacheControl ?? "3600")", .vary: "Accept",
        ]
        if let modified = Self.httpDate(object.updatedAt) { headers[.lastModified] = modified }
        if storage.declaration(of: object.bucketID)?.servesActiveContent != true { headers[.contentSecurityPolicy] = ActiveContent.sandboxPolicy }
        if let download = request.uri.queryParameters["download"].map(String.init) {
            let fileName = download.isEmpty ? String(object.name.split(separator: "/").last ?? "") : download
            let safeName = String(fileName.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F && $0 != "\"" && $0 != "\\" })
            headers[.contentDisposition] = "attachment; filename=\"\(safeName)\""
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: image.bytes)))
    }
}

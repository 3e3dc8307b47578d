import CaravanCore
import CaravanStorage
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension StorageController {
    func objectRoute(_ request: Request, _ context: CaravanRequestContext, _ rest: [String]) async throws -> Response {
        let method = request.method, read = method == .get || method == .head
        switch rest.first ?? "" {
        case "list" where method == .post && rest.count == 2:
            return try await list(request, context, bucket: rest[1])
        case "move" where method == .post && rest.count == 1, "copy" where method == .post && rest.count == 1:
            return try await moveOrCopy(request, context, copy: rest[0] == "copy")
        case "sign" where method == .post && rest.count == 2:
            return try await signMany(request, context, bucket: rest[1])
        case "sign" where method == .post && rest.count >= 3:
            return try await signOne(request, context, bucket: rest[1], name: Self.key(rest, from: 2))
        case "sign" where read && rest.count >= 3:
            guard let token = request.uri.queryParameters["token"].map(String.init) else { throw StorageError(.invalidRequest, "querystring must have required property 'token'") }
            return try await download(request, try await storage.signedDownload(bucket: rest[1], name: Self.key(rest, from: 2), token: token))
        case "public" where read && rest.count >= 3:
            return try await download(request, try await storage.publicDownload(bucket: rest[1], name: Self.key(rest, from: 2)))
        case "authenticated" where read && rest.count >= 3:
            return try await download(request, try await storage.download(bucket: rest[1], name: Self.key(rest, from: 2), as: try Self.identity(context)))
        case "info" where read && rest.count >= 3:
            return try await info(context, rest: Array(rest.dropFirst()))
        case "upload" where rest.count >= 4 && rest[1] == "sign" && method == .post:
            return try await signUpload(request, context, bucket: rest[2], name: Self.key(rest, from: 3))
        case "upload" where rest.count >= 4 && rest[1] == "sign" && method == .put:
            guard let token = request.uri.queryParameters["token"].map(String.init) else { throw StorageError(.invalidRequest, "querystring must have required property 'token'") }
            let (bucket, name) = (rest[2], Self.key(rest, from: 3))
            let object = try await storage.signedUpload(try await upload(request), bucket: bucket, name: name, token: token)
            return StorageWire.json(.object([("Id", .string(object.id)), ("Key", .string("\(bucket)/\(name)"))]))
        case "upload":
            throw StorageError(.invalidRequest, "Route \(method.rawValue):/object/upload not found (Caravan serves signed upload URLs, not resumable uploads)")
        default:
            return try await objectInBucket(request, context, rest)
        }
    }

    /// The object key: the segments from `index` on.
    static func key(_ segments: [String], from index: Int) -> String { segments[index...].joined(separator: "/") }

    /// `/object/{bucket}/{key}` (upload, update, download, delete) and `DELETE /object/{bucket}` (remove many).
    private func objectInBucket(_ request: Request, _ context: CaravanRequestContext, _ rest: [String]) async throws -> Response {
        let identity = try Self.identity(context)
        guard let bucket = rest.first else { throw StorageError(.invalidRequest, "Route not found") }
        let name = rest.dropFirst().joined(separator: "/")
        switch (request.method, rest.count) {
        case (.delete, 1):
            let body = try await Self.jsonBody(request)
            guard case .array(let items)? = body["prefixes"] else { throw StorageError(.invalidRequest, "body must have required property 'prefixes'") }
            let names = items.compactMap { item -> String? in if case .string(let name) = item { name } else { nil } }
            return StorageWire.json(.array(try await storage.remove(bucket: bucket, names: names, as: identity).map(StorageWire.object)))
        case (.delete, _):
            guard try await !storage.remove(bucket: bucket, names: [name], as: identity).isEmpty else { throw StorageError(.noSuchKey, "Object not found") }
            return StorageWire.message("Successfully deleted")
        case (.post, _), (.put, _):
            let upsert = request.method == .put || request.headers[Self.upsertField]?.lowercased() == "true"
            let object = try await storage.upload(try await upload(request), bucket: bucket, name: name, upsert: upsert, as: identity)
            return StorageWire.json(.object([("Id", .string(object.id)), ("Key", .string("\(bucket)/\(name)"))]))
        case (.get, _), (.head, _):
            return try await download(request, try await storage.download(bucket: bucket, name: name, as: identity))
        default:
            throw StorageError(.invalidRequest, "Route \(request.method.rawValue):/object not found")
        }
    }

    /// The upload's bytes and headers: the `file` part of a multipart form, or the whole body.
    private func upload(_ request: Request) async throws -> ObjectUpload {
        let limit = Int(storage.maxFileSize) + (1 << 20)
        let buffer = try await request.body(atMost: limit) { StorageError(.entityTooLarge, "The object exceeded the maximum allowed size") }
        let body = Data(buffer.readableBytesView)
        let contentType = request.headers[.contentType]
        let cacheControl = request.headers[.cacheControl].map { $0.replacingOccurrences(of: "max-age=", with: "") }
        guard let boundary = MultipartForm.boundary(of: contentType) else {
            return ObjectUpload(bytes: body, contentType: contentType, cacheControl: cacheControl, userMetadata: nil)
        }
        guard let form = MultipartForm.parse(body, boundary: boundary),
              let file = form.parts.first(where: { $0.filename != nil }) ?? form.part(named: "file") ?? form.part(named: "") else {
            throw StorageError(.invalidRequest, "The multipart body has no file part")
        }
        var metadata: JSONValue?
        if let text = form.field("metadata") {
            guard let parsed = try? JSONParser.parse(text), case .object = parsed else {  // anything but a JSON object is refused below
                throw StorageError(.invalidRequest, "metadata must be a JSON object")
            }
            metadata = parsed
        }
        return ObjectUpload(bytes: file.body, contentType: file.contentType, cacheControl: form.field("cacheControl") ?? cacheControl, userMetadata: metadata)
    }

    /// The bytes with their headers (`?download` or `?download=name` asks the browser to save them). A `Range:
    /// bytes=…` header gets 206 with `Content-Range` (416 when it cannot be satisfied), unless `If-Range` names
    /// another version; every answer says `Accept-Ranges: bytes`.
    private func download(_ request: Request, _ found: (StoredObject, Data)) async throws -> Response {
        let (object, data) = found
        var headers: HTTPFields = [
            .contentType: object.contentType, .eTag: object.etag, .acceptRanges: "bytes",
            .cacheControl: "max-age=\(object.cacheControl ?? "3600")",
        ]
        if let modified = Self.httpDate(object.updatedAt) { headers[.lastModified] = modified }
        // User content never runs on the API's origin: unless the bucket opts in, every object is sandboxed and an
        // active one (HTML, SVG, XML, script) is an attachment.
        let inline = storage.declaration(of: object.bucketID)?.servesActiveContent == true
        if !inline { headers[.contentSecurityPolicy] = ActiveContent.sandboxPolicy }
        let download = request.uri.queryParameters["download"].map(String.init)
        if download != nil || (!inline && ActiveContent.isActive(object.contentType)) {
            let fileName = (download ?? "").isEmpty ? String(object.name.split(separator: "/").last ?? "") : download ?? ""
            let safeName = String(fileName.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F && $0 != "\"" && $0 != "\\" })
            headers[.contentDisposition] = "attachment; filename=\"\(safeName)\""
        }
        let ifRange = request.headers[.ifRange]
        let rangeHeader = ifRange == nil || ifRange == object.etag ? request.headers[.range] : nil
        switch StorageByteRange(header: rangeHeader, size: data.count) {
        case .whole:
            headers[.contentLength] = String(data.count)
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        case .partial(let range):
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(data.count)"
            headers[.contentLength] = String(range.count)
            let slice = data[(data.startIndex + range.lowerBound)...(data.startIndex + range.upperBound)]
            return Response(status: .partialContent, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: slice)))
        case .unsatisfiable:
            return StorageWire.rangeNotSatisfiable(size: data.count)
        }
    }

    /// An ISO 8601 timestamp as an HTTP date (`Wed, 25 Nov 2026 21:37:18 GMT`).
    static func httpDate(_ timestamp: String) -> String? {
        guard let micros = Timestamp.parseMicroseconds(timestamp) else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(micros) / 1_000_000))
    }

    private func info(_ context: CaravanRequestContext, rest: [String]) async throws -> Response {
        var rest = rest
        var isPublic = false
        if rest.first == "public" || rest.first == "authenticated" {
            isPublic = rest.removeFirst() == "public"
        }
        guard rest.count >= 2 else { throw StorageError(.invalidRequest, "Route not found") }
        let bucket = rest[0], name = rest.dropFirst().joined(separator: "/")
        let object = isPublic ? try await storage.publicDownload(bucket: bucket, name: name).0
            : try await storage.info(bucket: bucket, name: name, as: try Self.identity(context))
        return StorageWire.json(StorageWire.info(object))
    }
}

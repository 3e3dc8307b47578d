import CaravanCore
import CaravanStorage
import Foundation
import Hummingbird

extension StorageController {
    /// `POST /object/list/{bucket}` with `{prefix, limit, offset, sortBy: {column, order}, search}`.
    func list(_ request: Request, _ context: CaravanRequestContext, bucket: String) async throws -> Response {
        let body = try await Self.jsonBody(request)
        var options = ListOptions()
        if case .string(let prefix)? = body["prefix"] { options.prefix = prefix }
        if let limit = try Self.count(body["limit"], name: "limit", minimum: 1) { options.limit = limit }
        if let offset = try Self.count(body["offset"], name: "offset", minimum: 0) { options.offset = offset }
        if case .string(let search)? = body["search"] { options.search = search }
        if let sortBy = body["sortBy"] {
            if case .string(let column)? = sortBy["column"] {
                guard let parsed = ListOptions.SortColumn(rawValue: column) else {
                    throw StorageError(.invalidRequest, "sortBy.column must be one of name, updated_at, created_at, last_accessed_at")
                }
                options.sortColumn = parsed
            }
            if case .string(let order)? = sortBy["order"] { options.descending = order.lowercased() == "desc" }
        }
        let entries = try await storage.list(bucket: bucket, options: options, as: try Self.identity(context))
        return StorageWire.json(.array(entries.map(StorageWire.entry)))
    }

    static func count(_ value: JSONValue?, name: String, minimum: Int) throws(StorageError) -> Int? {
        switch value {
        case nil, .null?: return nil
        case .integer(let n)? where n >= minimum: return Int(min(n, 1_000_000))
        case .string(let text)?: if let n = Int(text), n >= minimum { return n }
        default: break
        }
        throw StorageError(.invalidRequest, "\(name) must be an integer of at least \(minimum)")
    }

    /// `POST /object/move` and `/object/copy` with `{bucketId, sourceKey, destinationKey}`.
    func moveOrCopy(_ request: Request, _ context: CaravanRequestContext, copy: Bool) async throws -> Response {
        let identity = try Self.identity(context)
        let body = try await Self.jsonBody(request)
        guard case .string(let bucket)? = body["bucketId"], case .string(let from)? = body["sourceKey"], case .string(let to)? = body["destinationKey"] else {
            throw StorageError(.invalidRequest, "body must have required properties 'bucketId', 'sourceKey' and 'destinationKey'")
        }
        if case .string(let other)? = body["destinationBucket"], other != bucket {
            throw StorageError(.invalidRequest, "Moving or copying to another bucket is not supported by Caravan")
        }
        guard copy else {
            try await storage.move(bucket: bucket, from: from, to: to, as: identity)
            return StorageWire.message("Successfully moved")
        }
        let upsert = request.headers[Self.upsertField]?.lowercased() == "true"
        let object = try await storage.copy(bucket: bucket, from: from, to: to, upsert: upsert, as: identity)
        return StorageWire.json(.object([("Id", .string(object.id)), ("Key", .string("\(bucket)/\(to)")), ("name", .string(to)),
                                         ("bucket_id", .string(bucket))]))
    }

    static func expiresIn(_ body: JSONValue) throws(StorageError) -> Int64 {
        switch body["expiresIn"] {
        case .integer(let seconds)?: return seconds
        case .double(let seconds)?: return Int64(seconds)
        case .string(let text)?: if let seconds = Int64(text) { return seconds }
        default: break
        }
        throw StorageError(.invalidRequest, "body must have required property 'expiresIn'")
    }

    /// `/object/sign/{bucket}/{key}?token=…`, each key segment percent-encoded.
    static func signedPath(bucket: String, name: String, token: String) -> String {
        StorageService.signedPath(bucket: bucket, name: name, token: token)
    }

    /// `POST /object/sign/{bucket}/{key}` with `{expiresIn}`: `{signedURL}`.
    /// With `transform` (`{width, height, resize, quality, format}`), the URL is a render's,
    /// `/render/image/sign/{bucket}/{key}?token=…`, the transform in the token (as storage-api signs it).
    func signOne(_ request: Request, _ context: CaravanRequestContext, bucket: String, name: String) async throws -> Response {
        let body = try await Self.jsonBody(request)
        let expiresIn = try Self.expiresIn(body)
        let transform: ImageTransform? = switch body["transform"] {
        case nil, .null?: nil
        case let value?: try ImageTransform(json: value)
        }
        let path = try await storage.signedURL(bucket: bucket, name: name, expiresIn: expiresIn, transform: transform, as: try Self.identity(context))
        return StorageWire.json(.object([("signedURL", .string(path))]))
    }

    /// `POST /object/upload/sign/{bucket}/{key}` (`x-upsert: true` lets the upload replace): `{url, token}`, the URL
    /// relative to `/storage/v1` as storage-api gives it.
    func signUpload(_ request: Request, _ context: CaravanRequestContext, bucket: String, name: String) async throws -> Response {
        let upsert = request.headers[Self.upsertField]?.lowercased() == "true"
        let token = try await storage.signUpload(bucket: bucket, name: name, upsert: upsert, as: try Self.identity(context))
        let path = StorageService.signedPath(bucket: bucket, name: name, token: token, route: "/object/upload/sign/")
        return StorageWire.json(.object([("url", .string(path)), ("token", .string(token))]))
    }

    /// One item of a `signMany` answer: the signed URL, or the error for an object the caller cannot read.
    private func signed(bucket: String, path: String, expiresIn: Int64, identity: Identity) async throws -> JSONValue {
        let token: String
        do {
            token = try await storage.signURL(bucket: bucket, name: path, expiresIn: expiresIn, as: identity)
        } catch {
            guard error.code == .noSuchKey else { throw error }
            return .object([("error", .string("Either the object does not exist or you do not have access to it")), ("path", .string(path)), ("signedURL", .null)])
        }
        return .object([("error", .null), ("path", .string(path)), ("signedURL", .string(Self.signedPath(bucket: bucket, name: path, token: token)))])
    }

    /// `POST /object/sign/{bucket}` with `{expiresIn, paths}`: one `{error, path, signedURL}` per path.
    func signMany(_ request: Request, _ context: CaravanRequestContext, bucket: String) async throws -> Response {
        let identity = try Self.identity(context)
        let body = try await Self.jsonBody(request)
        let expiresIn = try Self.expiresIn(body)
        guard case .array(let items)? = body["paths"] else { throw StorageError(.invalidRequest, "body must have required property 'paths'") }
        var results: [JSONValue] = []
        for case .string(let path) in items {
            results.append(try await signed(bucket: bucket, path: path, expiresIn: expiresIn, identity: identity))
        }
        return StorageWire.json(.array(results))
    }
}

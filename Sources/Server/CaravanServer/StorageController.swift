import CaravanCore
import CaravanStorage
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// `/storage/v1`: Supabase Storage's bucket and object API (the subset storage3 and supabase-swift use). Every route
/// goes through one catch-all per method and is dispatched on its path segments, since object keys hold slashes.
struct StorageController {
    let storage: StorageService

    static let upsertField = HTTPField.Name("x-upsert")!
    static let prefix = "/storage/v1/"

    func register(on router: Router<CaravanRequestContext>) {
        let group = router.group("/storage/v1").add(middleware: StorageErrorMiddleware())
        for method in [HTTPRequest.Method.get, .head, .post, .put, .delete] {
            group.on("/**", method: method) { request, context in
                try await self.dispatch(request, context, Self.segments(of: request.uri.path))
            }
        }
    }

    /// The decoded path segments after `/storage/v1/`.
    static func segments(of path: String) throws(StorageError) -> [String] {
        guard path.hasPrefix(prefix) else { throw StorageError(.invalidRequest, "Route not found") }
        var segments: [String] = []
        for raw in path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false) {
            guard let decoded = String(raw).removingPercentEncoding else { throw StorageError(.invalidKey, "Invalid key: \(raw.prefix(200))") }
            segments.append(decoded)
        }
        return segments
    }

    private func dispatch(_ request: Request, _ context: CaravanRequestContext, _ segments: [String]) async throws -> Response {
        guard let head = segments.first else { throw StorageError(.invalidRequest, "Route not found") }
        let rest = Array(segments.dropFirst())
        switch head {
        case "bucket": return try await bucketRoute(request, context, rest)
        case "object": return try await objectRoute(request, context, rest)
        case "render": return try await renderRoute(request, context, rest)
        default: throw StorageError(.invalidRequest, "Route \(request.method.rawValue):/\(head) not found")
        }
    }

    /// The caller's identity (every route but public and signed downloads needs one).
    static func identity(_ context: CaravanRequestContext) throws(StorageError) -> Identity {
        guard let identity = context.identity else { throw StorageError(.missingCredentials, "No API key found in request") }
        return identity
    }

    /// The most bytes a JSON body of the storage API (buckets, listings, signing, moves) may hold.
    static let maxJSONBodyBytes = 1 << 20

    static func jsonBody(_ request: Request) async throws -> JSONValue {
        let buffer = try await request.body(atMost: maxJSONBodyBytes) {
            StorageError(.entityTooLarge, "The request body is larger than \(maxJSONBodyBytes) bytes")
        }
        guard buffer.readableBytes > 0 else { return .object([]) }
        do {
            return try JSONParser.parse(bytes: Array(buffer: buffer))
        } catch {
            throw StorageError(.invalidRequest, "Body is not valid JSON")
        }
    }

    // MARK: Buckets

    private func bucketRoute(_ request: Request, _ context: CaravanRequestContext, _ rest: [String]) async throws -> Response {
        let identity = try Self.identity(context)
        switch (request.method, rest.count) {
        case (.get, 0):
            return StorageWire.json(.array(try await storage.listBuckets(as: identity).map(StorageWire.bucket)))
        case (.get, 1), (.head, 1):
            return StorageWire.json(StorageWire.bucket(try await storage.bucket(rest[0], as: identity)))
        case (.post, 0):
            let body = try await Self.jsonBody(request)
            guard case .string(let id)? = body["id"] ?? body["name"] else { throw StorageError(.invalidRequest, "body must have required property 'name'") }
            try await storage.createBucket(id, settings: try Self.settings(body), as: identity)
            return StorageWire.json(.object([("name", .string(id))]))
        case (.put, 1):
            try await storage.updateBucket(rest[0], settings: try Self.settings(try await Self.jsonBody(request)), as: identity)
            return StorageWire.message("Successfully updated")
        case (.post, 2) where rest[1] == "empty":
            try await storage.emptyBucket(rest[0], as: identity)
            return StorageWire.message("Successfully emptied")
        case (.delete, 1):
            try await storage.deleteBucket(rest[0], as: identity)
            return StorageWire.message("Successfully deleted")
        default:
            throw StorageError(.invalidRequest, "Route \(request.method.rawValue):/bucket not found")
        }
    }

    /// The settings a create or update body names (absent keys: unchanged).
    static func settings(_ body: JSONValue) throws(StorageError) -> BucketSettings {
        var settings = BucketSettings()
        switch body["public"] {
        case .bool(let isPublic)?: settings.isPublic = isPublic
        case nil, .null?: break
        default: throw StorageError(.invalidRequest, "public must be a boolean")
        }
        if let limit = body["file_size_limit"] { settings.fileSizeLimit = .some(try sizeLimit(limit)) }
        switch body["allowed_mime_types"] {
        case nil: break
        case .null?: settings.allowedMimeTypes = .some(nil)
        case .array(let items)?:
            let types = items.compactMap { item -> String? in if case .string(let type) = item { type } else { nil } }
            guard types.count == items.count else { throw StorageError(.invalidRequest, "allowed_mime_types must be strings") }
            settings.allowedMimeTypes = .some(types.isEmpty ? nil : types)
        default: throw StorageError(.invalidRequest, "allowed_mime_types must be an array of strings")
        }
        return settings
    }

    /// A size limit: bytes as a number, or text such as `5MB`, `100KB`, `1GB` (binary units, as Supabase reads them).
    static func sizeLimit(_ value: JSONValue) throws(StorageError) -> Int64? {
        switch value {
        case .null: return nil
        case .integer(let bytes) where bytes >= 0: return bytes
        case .string(let text):
            let upper = text.trimmingCharacters(in: .whitespaces).uppercased()
            for (unit, factor) in [("GB", Int64(1) << 30), ("MB", Int64(1) << 20), ("KB", Int64(1) << 10), ("B", Int64(1))] where upper.hasSuffix(unit) {
                if let number = Double(upper.dropLast(unit.count).trimmingCharacters(in: .whitespaces)), number >= 0 { return Int64(number * Double(factor)) }
            }
            if let bytes = Int64(upper), bytes >= 0 { return bytes }
            throw StorageError(.invalidRequest, "file_size_limit must be a number of bytes or a size such as 5MB")
        default:
            throw StorageError(.invalidRequest, "file_size_limit must be a number of bytes or a size such as 5MB")
        }
    }
}

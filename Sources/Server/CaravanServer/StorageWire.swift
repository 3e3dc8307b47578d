import CaravanCore
import CaravanStorage
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The storage wire: errors in Supabase Storage's shape and the JSON of buckets, objects and listings.
enum StorageWire {
    /// Storage codes → the body's `statusCode` and `error` (storage-api's table).
    static func wire(for code: StorageError.Code) -> (statusCode: Int, error: String) {
        switch code {
        case .noSuchBucket: (404, "Bucket not found")
        case .noSuchKey: (404, "not_found")
        case .bucketAlreadyExists, .keyAlreadyExists: (409, "Duplicate")
        case .bucketNotEmpty: (409, "ResourceNotEmpty")
        case .entityTooLarge: (413, "Payload too large")
        case .invalidMimeType: (415, "invalid_mime_type")
        case .invalidKey: (400, "InvalidKey")
        case .invalidBucketName: (400, "Invalid Input")
        case .invalidRequest: (400, "InvalidRequest")
        case .accessDenied: (403, "Unauthorized")
        case .invalidSignature: (400, "InvalidSignature")
        case .invalidJWT: (400, "InvalidJWT")
        case .missingCredentials: (401, "Unauthorized")
        case .unavailable: (503, "DatabaseTimeout")
        case .invalidRange: (416, "InvalidRange")
        case .requestTimeout: (408, "request_timeout")
        case .featureNotEnabled: (501, "FeatureNotEnabled")
        case .invalidImage: (400, "InvalidImage")
        default: (500, "internal")
        }
    }

    /// `{"statusCode": "404", "code": "NoSuchKey", "error": "not_found", "message": "Object not found"}`. As
    /// storage-api does, the HTTP status is 400 for every client error (the body's `statusCode` says which), 500 for
    /// internal ones and 503 when the database is unavailable; a body past a limit is HTTP's own 413 and a body that
    /// stops arriving HTTP's own 408, as a proxy in front would answer them, so that clients streaming a body see them.
    static func response(for error: any Error, logger: Logger) -> Response {
        let storage = StorageError.from(error)
        if storage.code == .internalError {
            logger.error("storage request failed", metadata: ["error.detail": .string(storage.internalDetail ?? "\(error)")])
        }
        let statusCode = wire(for: storage.code).statusCode
        let status: HTTPResponse.Status = statusCode >= 500 || statusCode == 413 || statusCode == 408 ? HTTPResponse.Status(code: statusCode) : .badRequest
        return json(body(of: storage), status: status)
    }

    static func body(of storage: StorageError) -> JSONValue {
        let (statusCode, name) = wire(for: storage.code)
        return .object([
            ("statusCode", .string(String(statusCode))), ("code", .string(storage.code.description)), ("error", .string(name)),
            ("message", .string(statusCode == 500 ? "Internal Server Error" : storage.message)),
        ])
    }

    /// 416 for a download's `Range` that starts past the end (HTTP's own status, as S3 answers it, so that HTTP
    /// clients see it), with `Content-Range: bytes */size`.
    static func rangeNotSatisfiable(size: Int) -> Response {
        var response = json(body(of: StorageError(.invalidRange, "The requested range is not satisfiable")), status: .rangeNotSatisfiable)
        response.headers[.contentRange] = "bytes */\(size)"
        response.headers[.acceptRanges] = "bytes"
        return response
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        var writer = JSONWriter()
        writer.write(value)
        return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }

    static func message(_ text: String) -> Response { json(.object([("message", .string(text))])) }

    static func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }

    static func bucket(_ bucket: Bucket) -> JSONValue {
        .object([
            ("id", .string(bucket.id)), ("name", .string(bucket.name)), ("owner", .string(bucket.owner ?? "")), ("public", .bool(bucket.isPublic)),
            ("type", .string("STANDARD")), ("file_size_limit", bucket.fileSizeLimit.map(JSONValue.integer) ?? .null),
            ("allowed_mime_types", bucket.allowedMimeTypes.map { .array($0.map(JSONValue.string)) } ?? .null),
            ("created_at", .string(bucket.createdAt)), ("updated_at", .string(bucket.updatedAt)),
        ])
    }

    /// An object's `metadata` as Supabase's listings give it.
    static func metadata(_ object: StoredObject) -> JSONValue {
        .object([
            ("eTag", .string(object.etag)), ("size", .integer(object.size)), ("mimetype", .string(object.contentType)),
            ("cacheControl", .string(object.cacheControl.map { "max-age=\($0)" } ?? "no-cache")), ("lastModified", .string(object.updatedAt)),
            ("contentLength", .integer(object.size)), ("httpStatusCode", .integer(200)),
        ])
    }

    static func userMetadata(_ object: StoredObject) -> JSONValue {
        object.userMetadata.flatMap { try? JSONParser.parse($0) } ?? .null  // stored by Caravan as JSON: unparsable only if damaged
    }

    /// A `storage.objects` row as `remove` returns it.
    static func object(_ object: StoredObject) -> JSONValue {
        .object([
            ("id", .string(object.id)), ("bucket_id", .string(object.bucketID)), ("name", .string(object.name)), ("owner", text(object.owner)),
            ("owner_id", text(object.owner)), ("version", .string(object.version.id)), ("created_at", .string(object.createdAt)),
            ("updated_at", .string(object.updatedAt)), ("last_accessed_at", .string(object.lastAccessedAt)), ("metadata", metadata(object)),
            ("user_metadata", userMetadata(object)),
        ])
    }

    /// `GET /object/info/…`.
    static func info(_ object: StoredObject) -> JSONValue {
        .object([
            ("id", .string(object.id)), ("name", .string(object.name)), ("version", .string(object.version.id)), ("bucket_id", .string(object.bucketID)),
            ("size", .integer(object.size)), ("content_type", .string(object.contentType)), ("cache_control", text(object.cacheControl)),
            ("etag", .string(object.etag)), ("metadata", userMetadata(object)), ("last_modified", .string(object.updatedAt)),
            ("created_at", .string(object.createdAt)), ("owner", text(object.owner)),
        ])
    }

    static func entry(_ entry: ListEntry) -> JSONValue {
        switch entry {
        case .folder(let name):
            .object([("name", .string(name)), ("id", .null), ("updated_at", .null), ("created_at", .null), ("last_accessed_at", .null), ("metadata", .null)])
        case .object(let name, let object):
            .object([
                ("name", .string(name)), ("id", .string(object.id)), ("updated_at", .string(object.updatedAt)), ("created_at", .string(object.createdAt)),
                ("last_accessed_at", .string(object.lastAccessedAt)), ("metadata", metadata(object)), ("user_metadata", userMetadata(object)),
            ])
        }
    }
}

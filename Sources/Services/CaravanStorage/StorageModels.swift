public import CaravanCore
public import Foundation

/// A bucket as stored in `storage_buckets`.
public struct Bucket: Sendable, Hashable {
    public let id: String
    public let name: String
    public let owner: String?
    public let isPublic: Bool
    public let fileSizeLimit: Int64?
    public let allowedMimeTypes: [String]?
    public let createdAt: String
    public let updatedAt: String

    init(row: StoredRow) throws(StorageError) {
        guard let id = row.text("id"), let name = row.text("name"), let isPublic = row["public"].boolValue,
              let createdAt = row.text("created_at"), let updatedAt = row.text("updated_at") else {
            throw StorageError(.internalError, "Internal Server Error", internalDetail: "a storage_buckets row is incomplete")
        }
        self.id = id
        self.name = name
        owner = row.text("owner")
        self.isPublic = isPublic
        fileSizeLimit = row["file_size_limit"].integerValue
        allowedMimeTypes = row["allowed_mime_types"].textArrayValue
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// What a bucket is created or updated with; nil fields are left as they are on update.
public struct BucketSettings: Sendable, Hashable {
    public var isPublic: Bool?
    public var fileSizeLimit: Int64??
    public var allowedMimeTypes: [String]??

    public init(isPublic: Bool? = nil, fileSizeLimit: Int64?? = nil, allowedMimeTypes: [String]?? = nil) {
        self.isPublic = isPublic
        self.fileSizeLimit = fileSizeLimit
        self.allowedMimeTypes = allowedMimeTypes
    }
}

/// An object's metadata as stored in `storage_objects`.
public struct StoredObject: Sendable, Hashable {
    public let id: String
    public let bucketID: String
    public let name: String
    public let owner: String?
    public let version: ObjectVersion
    public let size: Int64
    /// `"<md5 hex>"`, quotes included.
    public let etag: String
    public let contentType: String
    public let cacheControl: String?
    /// The uploader's metadata, as JSON text.
    public let userMetadata: String?
    public let createdAt: String
    public let updatedAt: String
    public let lastAccessedAt: String

    init(row: StoredRow) throws(StorageError) {
        guard let id = row.text("id"), let bucketID = row.text("bucket_id"), let name = row.text("name"),
              let version = row.text("version").flatMap(ObjectVersion.init), let size = row["size"].integerValue,
              let etag = row.text("etag"), let contentType = row.text("content_type"), let createdAt = row.text("created_at"),
              let updatedAt = row.text("updated_at"), let lastAccessedAt = row.text("last_accessed_at") else {
            throw StorageError(.internalError, "Internal Server Error", internalDetail: "a storage_objects row is incomplete")
        }
        self.id = id
        self.bucketID = bucketID
        self.name = name
        owner = row.text("owner")
        self.version = version
        self.size = size
        self.etag = etag
        self.contentType = contentType
        cacheControl = row.text("cache_control")
        if case .json(let text) = row["user_metadata"] { userMetadata = text } else { userMetadata = nil }
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.lastAccessedAt = lastAccessedAt
    }
}

/// The bytes and headers of an upload.
public struct ObjectUpload: Sendable {
    public let bytes: Data
    /// The `Content-Type` the client claimed (of the form part, or of the request).
    public let contentType: String?
    public let cacheControl: String?
    /// A JSON object of the uploader's own.
    public let userMetadata: JSONValue?

    public init(bytes: Data, contentType: String?, cacheControl: String?, userMetadata: JSONValue?) {
        self.bytes = bytes
        self.contentType = contentType
        self.cacheControl = cacheControl
        self.userMetadata = userMetadata
    }
}

/// `POST /object/list/{bucket}`: the entries directly under `prefix` (a folder), files and sub-folders.
public struct ListOptions: Sendable, Hashable {
    public enum SortColumn: String, Sendable, Hashable, CaseIterable {
        case name, createdAt = "created_at", updatedAt = "updated_at", lastAccessedAt = "last_accessed_at"
    }

    public var prefix: String
    public var limit: Int
    public var offset: Int
    public var sortColumn: SortColumn
    public var descending: Bool
    /// Only entries whose name starts with this (case-insensitive).
    public var search: String?

    public init(prefix: String = "", limit: Int = 100, offset: Int = 0, sortColumn: SortColumn = .name, descending: Bool = false, search: String? = nil) {
        self.prefix = prefix
        self.limit = limit
        self.offset = offset
        self.sortColumn = sortColumn
        self.descending = descending
        self.search = search
    }
}

/// One entry of a listing: a folder (a common prefix) or an object, by its name within the folder.
public enum ListEntry: Sendable, Hashable {
    case folder(name: String)
    case object(name: String, StoredObject)

    public var name: String {
        switch self {
        case .folder(let name), .object(let name, _): name
        }
    }
}

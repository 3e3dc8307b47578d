package import CaravanCore
package import Foundation

/// A bucket as stored in `storage_buckets`.
package struct Bucket: Sendable, Hashable {
    package let id: String
    package let name: String
    package let owner: String?
    package let isPublic: Bool
    package let fileSizeLimit: Int64?
    package let allowedMimeTypes: [String]?
    package let createdAt: String
    package let updatedAt: String

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
package struct BucketSettings: Sendable, Hashable {
    package var isPublic: Bool?
    package var fileSizeLimit: Int64??
    package var allowedMimeTypes: [String]??

    package init(isPublic: Bool? = nil, fileSizeLimit: Int64?? = nil, allowedMimeTypes: [String]?? = nil) {
        self.isPublic = isPublic
        self.fileSizeLimit = fileSizeLimit
        self.allowedMimeTypes = allowedMimeTypes
    }
}

/// An object's metadata as stored in `storage_objects`.
package struct StoredObject: Sendable, Hashable {
    package let id: String
    package let bucketID: String
    package let name: String
    package let owner: String?
    package let version: ObjectVersion
    package let size: Int64
    /// `"<md5 hex>"`, quotes included.
    package let etag: String
    package let contentType: String
    package let cacheControl: String?
    /// The uploader's metadata, as JSON text.
    package let userMetadata: String?
    package let createdAt: String
    package let updatedAt: String
    package let lastAccessedAt: String

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
package struct ObjectUpload: Sendable {
    package let bytes: Data
    /// The `Content-Type` the client claimed (of the form part, or of the request).
    package let contentType: String?
    package let cacheControl: String?
    /// A JSON object of the uploader's own.
    package let userMetadata: JSONValue?

    package init(bytes: Data, contentType: String?, cacheControl: String?, userMetadata: JSONValue?) {
        self.bytes = bytes
        self.contentType = contentType
        self.cacheControl = cacheControl
        self.userMetadata = userMetadata
    }
}

/// `POST /object/list/{bucket}`: the entries directly under `prefix` (a folder), files and sub-folders.
package struct ListOptions: Sendable, Hashable {
    package enum SortColumn: String, Sendable, Hashable, CaseIterable {
        case name, createdAt = "created_at", updatedAt = "updated_at", lastAccessedAt = "last_accessed_at"
    }

    package var prefix: String
    package var limit: Int
    package var offset: Int
    package var sortColumn: SortColumn
    package var descending: Bool
    /// Only entries whose name starts with this (case-insensitive).
    package var search: String?

    package init(prefix: String = "", limit: Int = 100, offset: Int = 0, sortColumn: SortColumn = .name, descending: Bool = false, search: String? = nil) {
        self.prefix = prefix
        self.limit = limit
        self.offset = offset
        self.sortColumn = sortColumn
        self.descending = descending
        self.search = search
    }
}

/// One entry of a listing: a folder (a common prefix) or an object, by its name within the folder.
package enum ListEntry: Sendable, Hashable {
    case folder(name: String)
    case object(name: String, StoredObject)

    package var name: String {
        switch self {
        case .folder(let name), .object(let name, _): name
        }
    }
}

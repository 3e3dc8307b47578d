import CaravanCore

/// The one error type of storage, with a stable `Code` (Supabase Storage's error codes); the HTTP layer maps each
/// code to the wire shape `{"statusCode", "error", "message"}`. `message` is safe for clients; internal detail only
/// reaches the log.
package struct StorageError: Error, Sendable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        package var description: String { name }

        package static let noSuchBucket = Code("NoSuchBucket")
        package static let noSuchKey = Code("NoSuchKey")
        package static let bucketAlreadyExists = Code("BucketAlreadyExists")
        package static let keyAlreadyExists = Code("KeyAlreadyExists")
        package static let bucketNotEmpty = Code("ResourceNotEmpty")
        /// The object is over its bucket's (or the server's) size limit.
        package static let entityTooLarge = Code("EntityTooLarge")
        /// The bytes are of a MIME type the bucket does not allow.
        package static let invalidMimeType = Code("InvalidMimeType")
        package static let invalidKey = Code("InvalidKey")
        package static let invalidBucketName = Code("InvalidBucketName")
        /// A malformed request: a missing field, a body that does not parse.
        package static let invalidRequest = Code("InvalidRequest")
        /// The caller's policies refuse the operation.
        package static let accessDenied = Code("AccessDenied")
        /// A signed URL's token is malformed, forged, or for another object.
        package static let invalidSignature = Code("InvalidSignature")
        /// A signed URL's token has expired (or a key is not valid).
        package static let invalidJWT = Code("InvalidJWT")
        /// The request carries no key or token.
        package static let missingCredentials = Code("MissingCredentials")
        /// A download's `Range` starts past the object's end (HTTP 416).
        package static let invalidRange = Code("InvalidRange")
        /// A failure of the server; its detail is logged, never sent.
        package static let internalError = Code("InternalError")
        /// The database is unavailable for now.
        package static let unavailable = Code("DatabaseTimeout")
        /// The request body stopped arriving (HTTP 408).
        package static let requestTimeout = Code("RequestTimeout")
        /// Image transformations are off on this server (libvips is not installed): HTTP 501.
        package static let featureNotEnabled = Code("FeatureNotEnabled")
        /// An image object whose bytes the renderer cannot read.
        package static let invalidImage = Code("InvalidImage")
    }

    package let code: Code
    package let message: String
    package let internalDetail: String?

    package init(_ code: Code, _ message: String, internalDetail: String? = nil) {
        self.code = code
        self.message = message
        self.internalDetail = internalDetail
    }

    package var description: String { "StorageError(\(code)): \(message)" }

    static func noSuchBucket() -> StorageError { StorageError(.noSuchBucket, "Bucket not found") }
    static func noSuchKey() -> StorageError { StorageError(.noSuchKey, "Object not found") }
    static func tooLarge() -> StorageError { StorageError(.entityTooLarge, "The object exceeded the maximum allowed size") }

    /// The storage meaning of an error of the write pipeline or the store: a policy refusal, a duplicate key, an
    /// unavailable database; anything else is internal.
    package static func from(_ error: any Error, duplicate: Code = .keyAlreadyExists) -> StorageError {
        if let storage = error as? StorageError { return storage }
        guard let caravan = error as? CaravanError else {
            return StorageError(.internalError, "Internal Server Error", internalDetail: "\(error)")
        }
        switch caravan.code {
        case .permissionDenied: return StorageError(.accessDenied, "new row violates row-level security policy")
        case .uniqueViolation: return StorageError(duplicate, "The resource already exists")
        case .foreignKeyViolation: return noSuchBucket()
        case .notFound: return noSuchKey()
        case .storageUnavailable: return StorageError(.unavailable, "The database is unavailable, try again")
        case .requestTimeout: return StorageError(.requestTimeout, caravan.message)
        case .invalidToken, .expiredToken, .invalidTokenClaims: return StorageError(.invalidJWT, caravan.message)
        case .missingCredentials: return StorageError(.missingCredentials, caravan.message)
        case .checkViolation, .invalidValue, .notNullViolation: return StorageError(.invalidRequest, caravan.message)
        default: return StorageError(.internalError, "Internal Server Error", internalDetail: "\(caravan) \(caravan.internalDetail ?? "")")
        }
    }
}

public import CaravanCore

/// The one error type of storage, with a stable `Code` (Supabase Storage's error codes); the HTTP layer maps each
/// code to the wire shape `{"statusCode", "error", "message"}`. `message` is safe for clients; internal detail only
/// reaches the log.
public struct StorageError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        public static let noSuchBucket = Code("NoSuchBucket")
        public static let noSuchKey = Code("NoSuchKey")
        public static let bucketAlreadyExists = Code("BucketAlreadyExists")
        public static let keyAlreadyExists = Code("KeyAlreadyExists")
        public static let bucketNotEmpty = Code("ResourceNotEmpty")
        /// The object is over its bucket's (or the server's) size limit.
        public static let entityTooLarge = Code("EntityTooLarge")
        /// The bytes are of a MIME type the bucket does not allow.
        public static let invalidMimeType = Code("InvalidMimeType")
        public static let invalidKey = Code("InvalidKey")
        public static let invalidBucketName = Code("InvalidBucketName")
        /// A malformed request: a missing field, a body that does not parse.
        public static let invalidRequest = Code("InvalidRequest")
        /// The caller's policies refuse the operation.
        public static let accessDenied = Code("AccessDenied")
        /// A signed URL's token is malformed, forged, or for another object.
        public static let invalidSignature = Code("InvalidSignature")
        /// A signed URL's token has expired (or a key is not valid).
        public static let invalidJWT = Code("InvalidJWT")
        /// The request carries no key or token.
        public static let missingCredentials = Code("MissingCredentials")
        /// A download's `Range` starts past the object's end (HTTP 416).
        public static let invalidRange = Code("InvalidRange")
        /// A failure of the server; its detail is logged, never sent.
        public static let internalError = Code("InternalError")
        /// The database is unavailable for now.
        public static let unavailable = Code("DatabaseTimeout")
    }

    public let code: Code
    public let message: String
    public let internalDetail: String?

    public init(_ code: Code, _ message: String, internalDetail: String? = nil) {
        self.code = code
        self.message = message
        self.internalDetail = internalDetail
    }

    public var description: String { "StorageError(\(code)): \(message)" }

    static func noSuchBucket() -> StorageError { StorageError(.noSuchBucket, "Bucket not found") }
    static func noSuchKey() -> StorageError { StorageError(.noSuchKey, "Object not found") }
    static func tooLarge() -> StorageError { StorageError(.entityTooLarge, "The object exceeded the maximum allowed size") }

    /// The storage meaning of an error of the write pipeline or the store: a policy refusal, a duplicate key, an
    /// unavailable database; anything else is internal.
    public static func from(_ error: any Error, duplicate: Code = .keyAlreadyExists) -> StorageError {
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
        case .invalidToken, .expiredToken, .invalidTokenClaims: return StorageError(.invalidJWT, caravan.message)
        case .missingCredentials: return StorageError(.missingCredentials, caravan.message)
        case .checkViolation, .invalidValue, .notNullViolation: return StorageError(.invalidRequest, caravan.message)
        default: return StorageError(.internalError, "Internal Server Error", internalDetail: "\(caravan) \(caravan.internalDetail ?? "")")
        }
    }
}

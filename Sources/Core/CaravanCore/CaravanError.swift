/// The one error type of Caravan's engine-neutral layers.
///
/// `code` is stable and matched by callers; `message`, `details` and `hint` are safe to show to a
/// client: they never carry SQL, bound values, tokens or internal paths. Internal detail goes to
/// `internalDetail`, which only reaches the log.
public struct CaravanError: Error, Sendable, CustomStringConvertible {
    /// A stable, extensible error code. New codes can be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The request's query, select, order or logic-tree syntax is malformed.
        public static let parseError = Code("parseError")
        /// The request's query is larger or nests deeper than a limit of `QueryLimits` (its message names the limit).
        public static let limitExceeded = Code("limitExceeded")
        /// The request's query string is longer than `QueryLimits.maxQueryLength` (HTTP 414).
        public static let uriTooLong = Code("uriTooLong")
        /// A JSON body could not be parsed.
        public static let malformedBody = Code("malformedBody")
        /// Offset, limit or range cannot be satisfied.
        public static let invalidRange = Code("invalidRange")
        /// The table is not exposed.
        public static let unknownTable = Code("unknownTable")
        /// A column named in select, filter or order does not exist.
        public static let unknownColumn = Code("unknownColumn")
        /// A column named in a body or `columns=` does not exist.
        public static let unknownBodyColumn = Code("unknownBodyColumn")
        /// The operator does not apply to the column's type.
        public static let unsupportedOperator = Code("unsupportedOperator")
        /// Resource embedding or another optional PostgREST feature that Caravan does not serve.
        public static let unsupportedEmbedding = Code("unsupportedEmbedding")
        /// An embedded resource matches more than one relationship (PGRST201); a `!hint` chooses.
        public static let ambiguousEmbedding = Code("ambiguousEmbedding")
        /// A `select=` uses an aggregate function while the server has them off (PGRST123).
        public static let aggregatesNotAllowed = Code("aggregatesNotAllowed")
        /// An aggregate function does not apply to its input's type (Postgres 42883).
        public static let undefinedFunction = Code("undefinedFunction")
        /// A column of a grouped read is neither grouped nor aggregated (Postgres 42803).
        public static let groupingError = Code("groupingError")
        /// A singular (object) response was requested but the result has another number of rows.
        public static let singularityViolation = Code("singularityViolation")
        /// The `Accept` media type cannot be produced.
        public static let notAcceptable = Code("notAcceptable")
        /// The requested schema (`Accept-Profile`) is not exposed.
        public static let invalidSchema = Code("invalidSchema")
        /// A value does not parse as the column's type.
        public static let invalidValue = Code("invalidValue")
        /// A number does not fit the column's precision.
        public static let numericOutOfRange = Code("numericOutOfRange")
        /// A regular expression does not compile.
        public static let invalidRegularExpression = Code("invalidRegularExpression")
        /// A LIKE pattern ends with an escape character.
        public static let invalidEscapeSequence = Code("invalidEscapeSequence")
        /// A NOT NULL column received no value.
        public static let notNullViolation = Code("notNullViolation")
        /// A CHECK constraint failed.
        public static let checkViolation = Code("checkViolation")
        /// A UNIQUE or primary-key constraint failed.
        public static let uniqueViolation = Code("uniqueViolation")
        /// A foreign key points at no row.
        public static let foreignKeyViolation = Code("foreignKeyViolation")
        /// The token cannot be decoded or its signature is wrong.
        public static let invalidToken = Code("invalidToken")
        /// The token has expired.
        public static let expiredToken = Code("expiredToken")
        /// A claim of the token is malformed or refuses this use: `exp` missing or not a number, `nbf` or `iat` in
        /// the future, a foreign `aud`.
        public static let invalidTokenClaims = Code("invalidTokenClaims")
        /// The request carries no key or token.
        public static let missingCredentials = Code("missingCredentials")
        /// The role has no privilege for this operation.
        public static let permissionDenied = Code("permissionDenied")
        /// No RPC function has that name and those arguments.
        public static let unknownFunction = Code("unknownFunction")
        /// The HTTP method is not allowed for this resource.
        public static let methodNotAllowed = Code("methodNotAllowed")
        /// An UPDATE or DELETE without any filter.
        public static let missingFilter = Code("missingFilter")
        /// A function raised an application error (Postgres `RAISE`).
        public static let raisedException = Code("raisedException")
        /// `on_conflict` names no unique key.
        public static let invalidConflictTarget = Code("invalidConflictTarget")
        /// An unknown preference with `handling=strict`.
        public static let invalidPreference = Code("invalidPreference")
        /// A write touched more rows than `Prefer: handling=strict, max-affected=n` allows; it was rolled back.
        public static let maxAffectedExceeded = Code("maxAffectedExceeded")
        /// `max-affected` under strict handling on a function that returns no set of rows.
        public static let maxAffectedNeedsRows = Code("maxAffectedNeedsRows")
        /// The storage engine is temporarily unavailable.
        public static let storageUnavailable = Code("storageUnavailable")
        /// An internal failure; its detail is logged, never sent.
        public static let internalFailure = Code("internalFailure")
        /// A write was attempted on a database that is open read-only (such as a transit bundle).
        public static let readOnlyDatabase = Code("readOnlyDatabase")
        /// Input data (a GTFS feed, a file) is unreadable or breaks its format; the message names file and line.
        public static let invalidFeed = Code("invalidFeed")
        /// The deployment's configuration cannot be served (unknown app, two apps declaring one table).
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// A thing named by its id (a stop, a trip) does not exist.
        public static let notFound = Code("notFound")
        /// A full-text query in `to_tsquery` syntax is malformed (Postgres 42601).
        public static let invalidTextSearchQuery = Code("invalidTextSearchQuery")
        /// An argument is outside its allowed range (Postgres 22023).
        public static let invalidParameterValue = Code("invalidParameterValue")
        /// A named object such as a text-search configuration does not exist (Postgres 42704).
        public static let undefinedObject = Code("undefinedObject")
        /// A sync cursor from another history (epoch), an older log than is kept, or malformed: pull a new snapshot.
        public static let mustRefetch = Code("mustRefetch")
        /// The table exists but its app module does not declare it synced.
        public static let notSynced = Code("notSynced")
        /// A request body or batch over its size limit.
        public static let payloadTooLarge = Code("payloadTooLarge")
        /// A request body stopped arriving: no bytes within the body timeout (HTTP 408).
        public static let requestTimeout = Code("requestTimeout")
        /// A service the server depends on (a translation provider) failed or answered nonsense (HTTP 502).
        public static let upstreamFailure = Code("upstreamFailure")
    }

    public let code: Code
    /// Client-safe summary.
    public let message: String
    /// Client-safe details, or nil.
    public let details: String?
    /// Client-safe hint, or nil.
    public let hint: String?
    /// Diagnostic text for the log only.
    public let internalDetail: String?

    public init(_ code: Code, _ message: String, details: String? = nil, hint: String? = nil, internalDetail: String? = nil) {
        self.code = code
        self.message = message
        self.details = details
        self.hint = hint
        self.internalDetail = internalDetail
    }

    public var description: String { "CaravanError(\(code)): \(message)" }
}

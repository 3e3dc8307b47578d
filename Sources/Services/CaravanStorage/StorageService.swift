package import CaravanCore
import Foundation
package import Logging

/// Signs and verifies the tokens of signed URLs with the deployment's signing secret (the server adapts its JWT
/// verifier): a token is a JWT whose claims say which object (`url`: `bucket/name`) and until when (`exp`).
package protocol URLSigner: Sendable {
    /// A token carrying `claims`.
    func sign(_ claims: JSONValue) async throws -> String
    /// The claims of a token whose signature holds and which has not expired; `invalidJWT` otherwise.
    func verify(_ token: String) async throws(StorageError) -> JSONValue
}

/// Supabase Storage on Caravan: buckets and objects whose metadata lives in `storage_buckets` / `storage_objects`
/// (every read under the caller's policies, every write through the write pipeline, so into the change log) and
/// whose bytes live in an `ObjectByteStore`.
package struct StorageService: Sendable {
    package let pipeline: WritePipeline
    package let catalog: Catalog
    package let bytes: any ObjectByteStore
    package let signer: any URLSigner
    /// The largest object of any bucket, in bytes (a bucket's own limit may be lower).
    package let maxFileSize: Int64
    /// Image renders (`/render/image`): libvips when the server found it, off otherwise.
    package let images: ImageTransformations
    /// Seconds since 1970 (signed URLs' `iat` and `exp`).
    let now: @Sendable () -> Int64
    let logger: Logger

    package init(pipeline: WritePipeline, catalog: Catalog, bytes: any ObjectByteStore, signer: any URLSigner, maxFileSize: Int64,
                images: ImageTransformations = .unavailable, now: @escaping @Sendable () -> Int64, logger: Logger) {
        self.pipeline = pipeline
        self.catalog = catalog
        self.bytes = bytes
        self.signer = signer
        self.maxFileSize = maxFileSize
        self.images = images
        self.now = now
        self.logger = logger
    }

    /// Supabase's default global limit: 50 MB.
    package static let defaultMaxFileSize: Int64 = 50 * 1024 * 1024

    func access(_ identity: Identity) -> AccessContext { catalog.access(for: identity) }

    /// The app modules' declaration of bucket `id`, if one declares it.
    package func declaration(of id: String) -> BucketDeclaration? {
        catalog.modules.lazy.flatMap(\.buckets).first { $0.id == id }
    }

    /// Runs `body` in one pipeline transaction as `identity`, turning store errors into storage errors.
    /// With `dryRun` the transaction is rolled back: it only finds out whether the policies and constraints let it through.
    func write<T: Sendable>(as identity: Identity, duplicate: StorageError.Code = .keyAlreadyExists, dryRun: Bool = false,
                            _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws(StorageError) -> T {
        do {
            return try await pipeline.run(access(identity), rollback: dryRun, body)
        } catch {
            throw logged(StorageError.from(error, duplicate: duplicate))
        }
    }

    /// Rows of `table` matching `filter` and the caller's select policy.
    func rows(_ table: TableSchema, where filter: BoundPredicate, as identity: Identity, order: [OrderTerm] = [],
              limit: Int? = nil) async throws(StorageError) -> [StoredRow] {
        do {
            let rule = try access(identity).readRule(table)
            let plan = try ReadPlan(table: table, query: Query(order: order, limit: limit), access: .both(filter, rule), maxRows: nil, includeCount: false)
            return try await pipeline.store.fetch(plan).rows.map { StoredRow(table: table, values: $0) }
        } catch {
            throw logged(StorageError.from(error))
        }
    }

    func logged(_ error: StorageError) -> StorageError {
        if error.code == .internalError {
            logger.error("storage operation failed", metadata: ["error.detail": .string(error.internalDetail ?? error.message)])
        }
        return error
    }

    /// `column = value` on `table` (a programming error if the column is unknown).
    static func equals(_ table: TableSchema, _ column: String, _ value: Value) throws(StorageError) -> BoundPredicate {
        do {
            return try table.equals(column, value)
        } catch {
            throw StorageError(.internalError, "Internal Server Error", internalDetail: "\(error)")
        }
    }

    /// The object `name` of `bucket`, as `identity` sees it, or nil.
    func object(_ bucket: String, _ name: String, as identity: Identity) async throws(StorageError) -> StoredObject? {
        let table = StorageSchema.objects
        let filter = BoundPredicate.and([try Self.equals(table, "bucket_id", .text(bucket)), try Self.equals(table, "name", .text(name))])
        return try await rows(table, where: filter, as: identity, limit: 1).first.map { row throws(StorageError) in try StoredObject(row: row) }
    }

    /// The object, or `noSuchKey`.
    func requireObject(_ bucket: String, _ name: String, as identity: Identity) async throws(StorageError) -> StoredObject {
        guard let found = try await object(bucket, name, as: identity) else { throw StorageError.noSuchKey() }
        return found
    }

    /// Removes bytes no row points at any more; a failure leaves an orphan (never served) and is logged.
    func discard(_ versions: [ObjectVersion]) async {
        images.cache.remove(versions: versions)
        do {
            try await bytes.remove(versions)
        } catch {
            logger.warning("object bytes not removed", metadata: ["error": .string("\(error)")])
        }
    }
}

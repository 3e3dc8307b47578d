package import CaravanAuth
package import CaravanCore
package import CaravanDeployment
package import CaravanServer
package import CaravanStorage
import CaravanSync
import Foundation
package import Logging
import CaravanRealtime
import NIOPosix

package func epochSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }

package func epochMicroseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }

/// The auth service of a deployment on the system clock and random ids; codes go to `sender` (the development
/// outbox unless given: `caravan serve` passes its running `SMTPSender` when SMTP is configured).
package func makeAuthService(configuration: ServerConfiguration, store: any Store, catalog: Catalog, pipeline: WritePipeline,
                     secret: SigningSecret, verifier: TokenVerifier, sender: (any MessageSender)? = nil,
                     logger: Logger) async throws -> AuthService {
    let sender = sender ?? OutboxSender(pipeline: pipeline, catalog: catalog, logger: logger, clock: .system)
    return try await AuthService(store: store, pipeline: pipeline, catalog: catalog, secret: secret, verifier: verifier,
                                 configuration: configuration.auth, baseURL: configuration.baseURL, sender: sender,
                                 threadPool: .singleton, logger: logger, clock: .system, ids: .random)
}

/// Storage of a deployment: bytes in the data directory (`storage/`) on SQLite, in the database on PostgreSQL; signed
/// URLs with the deployment's signing secret.
package func makeStorageService(deployment: Deployment, pipeline: WritePipeline, catalog: Catalog, verifier: TokenVerifier,
                        configuration: ServerConfiguration, logger: Logger) -> StorageService {
    let bytes: any ObjectByteStore = switch deployment.location {
    case .directory(let directory): FileByteStore(directory: URL(fileURLWithPath: directory).appendingPathComponent("storage", isDirectory: true))
    case .database: DatabaseByteStore(pipeline: pipeline, catalog: catalog)
    }
    return StorageService(pipeline: pipeline, catalog: catalog, bytes: bytes, signer: TokenURLSigner(verifier: verifier),
                          maxFileSize: configuration.storageMaxFileSize, images: .vips(limits: configuration.imageLimits),
                          now: epochSeconds, logger: logger)
}

/// The change log of a deployment's store, for the realtime feed: any engine, through the storage port.
struct StoreChangeLog: ChangeLogSource {
    let store: any Store

    func changes(after seq: Int64, limit: Int) async throws -> [Change] { try await store.changes(after: seq, limit: limit) }
    func latestChangeSeq() async throws -> Int64 { try await store.changeLogState().head }
}


package import CaravanCore
import Crypto
import Foundation
package import Logging
package import NIOPosix
import Synchronization

/// GoTrue's flows on Caravan's store: sign-up, sign-in (password, refresh token, Apple id_token, one-time codes),
/// sessions with rotating refresh tokens, user updates, logout, and the admin API. Knows no HTTP.
package final class AuthService: Sendable {
    let store: any Store
    let pipeline: WritePipeline
    let catalog: Catalog
    let verifier: TokenVerifier
    package let configuration: AuthConfiguration
    let issuer: String
    let sender: any MessageSender
    /// Where codes go when the answer must not wait for them (sign-ups off); a service of the server's group.
    package let deliveries: DeferredCodeDeliveries
    let apple: AppleIDTokenVerifier?
    /// The configured OIDC providers (`auth_oidc_*`).
    let oidc: OIDCProviders
    let passwords: PasswordHasher
    let policy: PasswordPolicy
    let limiter: RateLimiter
    let refreshKey: SymmetricKey
    let logger: Logger
    /// The wall clock every timestamp, token lifetime and code expiry is read from.
    let clock: WallClock
    /// Where user and session ids come from.
    let ids: IDGenerator

    /// - Parameters:
    ///   - baseURL: the server's public URL; tokens carry `iss = <baseURL>/auth/v1` unless `auth_external_url` is set.
    ///   - clock: the wall clock (`.system` in the server, a fixed one in tests).
    ///   - ids: the generator of user and session ids (`.random` in the server).
    package init(store: any Store, pipeline: WritePipeline, catalog: Catalog, secret: SigningSecret, verifier: TokenVerifier,
                configuration: AuthConfiguration, baseURL: String, sender: any MessageSender, threadPool: NIOThreadPool,
                logger: Logger, clock: WallClock, ids: IDGenerator) async throws {
        self.store = store
        self.pipeline = pipeline
        self.catalog = catalog
        self.verifier = verifier
        self.configuration = configuration
        self.issuer = (configuration.externalURL ?? baseURL) + "/auth/v1"
        self.sender = sender
        self.deliveries = DeferredCodeDeliveries(logger: logger)
        self.apple = configuration.apple.map { AppleIDTokenVerifier(configuration: $0, now: { clock.seconds }) }
        self.oidc = OIDCProviders(configuration.oauth.providers, now: { clock.seconds })
        self.passwords = try await PasswordHasher(cost: configuration.bcryptCost, pool: threadPool)
        self.policy = PasswordPolicy(minimumLength: configuration.minimumPasswordLength)
        self.limiter = RateLimiter(windowSeconds: configuration.rateLimitWindow)
        self.refreshKey = SymmetricKey(data: Secrets.hmacSHA256(key: SymmetricKey(data: secret.bytes), "caravan refresh tokens"))
        self.logger = logger
        self.clock = clock
        self.ids = ids
    }

    var nowSeconds: Int64 { clock.seconds }

    /// `value` when it is a JSON object, else `{}` (metadata must be an object).
    static func objectOrEmpty(_ value: JSONValue?) -> JSONValue {
        if case .object? = value, let value { return value }
        return .object([])
    }

    var serviceAccess: AccessContext { catalog.access(for: .serviceRole) }

    /// Runs `body` in one transaction as the service role, with typed storage at the transaction's instant. An
    /// `AuthError` the body throws rolls the transaction back and reaches the caller as it is, on every engine (a
    /// store translates errors it does not know, e.g. PostgreSQL's into `storage_unavailable`).
    func write<T: Sendable>(_ body: @escaping @Sendable (AuthStorage) async throws -> T) async throws -> T {
        let now = Timestamp.format(microseconds: clock.microseconds)
        let refusal = RefusalBox()
        do {
            return try await pipeline.run(serviceAccess) { tx in
                refusal.value.withLock { $0 = nil }
                do {
                    return try await body(AuthStorage(tx: tx, now: now))
                } catch let error as AuthError {
                    refusal.value.withLock { $0 = error }
                    throw CaravanError(.internalFailure, error.message, internalDetail: "auth refusal \(error.code.rawValue), rolled back")
                }
            }
        } catch {
            if let refused = refusal.value.withLock({ $0 }) { throw refused }
            throw error
        }
    }

    /// Like `write`, for flows whose refusals must still commit (a failed code attempt is counted, a reused refresh
    /// token revokes its family): the body returns the refusal, which is thrown after commit.
    func writeThenCheck<T: Sendable>(_ body: @escaping @Sendable (AuthStorage) async throws -> Result<T, AuthError>) async throws -> T {
        try await write(body).get()
    }

    /// `Contact.from` under the deployment's rule for email look-alikes (`auth_email_lookalikes`).
    func contact(email: String?, phone: String?) throws(AuthError) -> Contact? {
        try Contact.from(email: email, phone: phone, lookalikes: configuration.emailLookalikes)
    }

    /// An email as stored and compared, under the deployment's rule for look-alikes.
    func normalizedEmail(_ text: String) throws(AuthError) -> String {
        try Contact.normalizeEmail(text, lookalikes: configuration.emailLookalikes)
    }

    // MARK: Abuse limits

    /// Counts a request of `action` from `client` about `identifier` (an email or phone) against the per-IP and
    /// per-identifier limits; a refusal carries the seconds until its window ends. Sign-in counts per identifier
    /// *and* address, so failures from one address never refuse the right password from another.
    func limit(_ action: RateLimitedAction, client: AuthClient, identifier: String?) throws(AuthError) {
        guard let rule = configuration.rateLimits[action] else { return }
        let now = nowSeconds
        if case .refused(let retryAfter) = limiter.admit("\(action.rawValue)|ip|\(client.ip)", limit: rule.perIP, now: now) {
            throw AuthError(.overRequestRateLimit, "Request rate limit reached", retryAfter: retryAfter)
        }
        guard let identifier, let perIdentifier = rule.perIdentifier else { return }
        let key = action == .signIn ? "\(action.rawValue)|id|\(identifier)|ip|\(client.ip)" : "\(action.rawValue)|id|\(identifier)"
        if case .refused(let retryAfter) = limiter.admit(key, limit: perIdentifier, now: now) {
            throw AuthError(.overRequestRateLimit, "Request rate limit reached", retryAfter: retryAfter)
        }
    }
}

/// The refusal a transaction body threw, kept across the store's error translation (see `AuthService.write`).
private final class RefusalBox: Sendable {
    let value = Mutex<AuthError?>(nil)
}

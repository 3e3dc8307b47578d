import HummingbirdBcrypt
import NIOPosix

/// Bcrypt hashing and checking, always on a thread pool: a cost-12 hash takes ~0.2 s of CPU, which must never
/// stall an event loop. Unknown users are checked against a dummy hash so that their sign-ins take as long.
struct PasswordHasher: Sendable {
    let cost: UInt8
    let pool: NIOThreadPool
    private let dummyHash: String

    init(cost: UInt8, pool: NIOThreadPool) async throws {
        self.cost = cost
        self.pool = pool
        let filler = Secrets.randomToken(bytes: 16)
        self.dummyHash = try await pool.runIfActive { Bcrypt.hash(filler, cost: cost) }
    }

    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await pool.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether `password` matches `hash`; with no hash (unknown user, no password set) it burns the same time and
    /// answers false.
    func verify(_ password: String, hash: String?) async throws -> Bool {
        let target = hash ?? dummyHash
        let matches = try await pool.runIfActive { Bcrypt.verify(password, hash: target) }
        return hash != nil && matches
    }
}

/// The password rules: a minimum length (configurable) and bcrypt's 72-byte ceiling.
struct PasswordPolicy: Sendable {
    let minimumLength: Int

    func check(_ password: String) throws(AuthError) {
        if password.utf8.count > 72 {
            throw AuthError(.validationFailed, "Password cannot be longer than 72 characters")
        }
        if password.count < minimumLength {
            throw AuthError(.weakPassword, "Password should be at least \(minimumLength) characters.", weakPasswordReasons: [.length])
        }
    }
}

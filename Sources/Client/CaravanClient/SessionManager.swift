import CaravanCore
import Foundation

/// Signs in every way the server does and hands out a valid access token, refreshing it shortly before it expires.
/// The session is kept in a `SessionStore` (the Keychain, a 0600 file, or the local store). Refresh tokens rotate as
/// GoTrue does: the new pair is saved at once; a refresh retried after a lost reply gets the same child from the
/// server within its reuse interval.
public struct SessionManager: Sendable {
    public let sessions: any SessionStore
    public let api: CaravanAPI
    /// Seconds since 1970, now.
    public let now: @Sendable () -> Int64
    /// Refresh when the token has less than this many seconds left.
    public let refreshMargin: Int64

    public init(sessions: any SessionStore, api: CaravanAPI, now: @escaping @Sendable () -> Int64, refreshMargin: Int64 = 60) {
        self.sessions = sessions
        self.api = api
        self.now = now
        self.refreshMargin = refreshMargin
    }

    /// The session kept in the local store's own table.
    public init(store: LocalStore, api: CaravanAPI, now: @escaping @Sendable () -> Int64, refreshMargin: Int64 = 60) {
        self.init(sessions: store, api: api, now: now, refreshMargin: refreshMargin)
    }

    /// The stored session, or nil when signed out.
    public func current() throws -> ClientSession? { try sessions.loadSession() }

    @discardableResult
    public func signUp(email: String, password: String) async throws -> ClientSession {
        try await keep(api.signUp(.email(email), password: password))
    }

    /// A new user with an email or phone and a password.
    @discardableResult
    public func signUp(_ contact: AuthContact, password: String) async throws -> ClientSession {
        try await keep(api.signUp(contact, password: password))
    }

    /// A new anonymous user (the server's `auth_anonymous_enabled`); it can add an email or phone later.
    @discardableResult
    public func signInAnonymously() async throws -> ClientSession {
        try await keep(api.signUpAnonymously())
    }

    @discardableResult
    public func signIn(email: String, password: String) async throws -> ClientSession {
        try await keep(api.signIn(.email(email), password: password))
    }

    @discardableResult
    public func signIn(_ contact: AuthContact, password: String) async throws -> ClientSession {
        try await keep(api.signIn(contact, password: password))
    }

    /// Asks the server to send a one-time code to the email or phone; `verifyCode` then signs in with it.
    public func sendCode(to contact: AuthContact, createUser: Bool = true) async throws {
        try await api.sendCode(to: contact, createUser: createUser)
    }

    @discardableResult
    public func verifyCode(_ code: String, sentTo contact: AuthContact) async throws -> ClientSession {
        try await keep(api.verifyCode(code, sentTo: contact))
    }

    /// Sign in with Apple: the `identityToken` of an `ASAuthorizationAppleIDCredential` (as text) and the raw nonce
    /// whose SHA-256 was set on the request.
    @discardableResult
    public func signInWithApple(idToken: String, nonce: String?) async throws -> ClientSession {
        try await keep(api.signInWithApple(idToken: idToken, nonce: nonce))
    }

    public func signOut() throws { try sessions.saveSession(nil) }

    /// The access token to send (refreshed first when it is about to expire), or nil when signed out (the API key
    /// is sent instead: the anon role).
    public func accessToken(forceRefresh: Bool = false) async throws -> String? {
        guard let session = try sessions.loadSession() else { return nil }
        if !forceRefresh && session.expiresAt - now() > refreshMargin { return session.accessToken }
        return try await keep(api.refresh(session.refreshToken)).accessToken
    }

    private func keep(_ session: ClientSession) throws -> ClientSession {
        try sessions.saveSession(session)
        return session
    }
}

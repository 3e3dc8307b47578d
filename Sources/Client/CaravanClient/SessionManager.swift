import CaravanCore
import Foundation

/// Keeps the signed-in session in the local store and hands out a valid access token, refreshing it shortly before
/// it expires. Refresh tokens rotate as GoTrue does: the new pair is saved at once; a refresh retried after a lost
/// reply gets the same child from the server within its reuse interval.
public struct SessionManager: Sendable {
    public let store: LocalStore
    public let api: CaravanAPI
    /// Seconds since 1970, now.
    public let now: @Sendable () -> Int64
    /// Refresh when the token has less than this many seconds left.
    public let refreshMargin: Int64

    public init(store: LocalStore, api: CaravanAPI, now: @escaping @Sendable () -> Int64, refreshMargin: Int64 = 60) {
        self.store = store
        self.api = api
        self.now = now
        self.refreshMargin = refreshMargin
    }

    @discardableResult
    public func signUp(email: String, password: String) async throws -> ClientSession {
        let session = try await api.signUp(email: email, password: password)
        try store.saveSession(session)
        return session
    }

    @discardableResult
    public func signIn(email: String, password: String) async throws -> ClientSession {
        let session = try await api.signIn(email: email, password: password)
        try store.saveSession(session)
        return session
    }

    public func signOut() throws { try store.saveSession(nil) }

    /// The access token to send (refreshed first when it is about to expire), or nil when signed out (the API key
    /// is sent instead: the anon role).
    public func accessToken(forceRefresh: Bool = false) async throws -> String? {
        guard let session = try store.session() else { return nil }
        if !forceRefresh && session.expiresAt - now() > refreshMargin { return session.accessToken }
        let fresh = try await api.refresh(session.refreshToken)
        try store.saveSession(fresh)
        return fresh.accessToken
    }
}

public import CaravanClient
import CaravanClientModels
import CaravanCore
public import Foundation
import Places

/// Everything the places app keeps on the device, made once at launch: the local store of the synced tables (in an
/// app-group folder, so widgets can read it), the session, the sync engine. The view models take it.
public final class PlacesClient: Sendable {
    /// The tables the app mirrors: `places` (read-only for users) and the signed-in user's `favorites`.
    public static let tables = ["places", "favorites"]

    public let store: LocalStore
    public let sessions: SessionManager
    public let engine: SyncEngine

    /// - Parameters:
    ///   - directory: where the store lives (an app-group container on iOS).
    ///   - serverURL, apiKey: the Caravan server and its `anon` key.
    ///   - sessions: where the session is kept (`KeychainSessionStore` on Apple platforms; the store by default).
    public init(directory: String, serverURL: String, apiKey: String, transport: any HTTPTransport, sessions: (any SessionStore)? = nil) throws {
        store = try LocalStore(path: directory + "/places.sqlite", tables: PlacesModule.module.tables.filter { Self.tables.contains($0.name) })
        let api = CaravanAPI(baseURL: serverURL, apiKey: apiKey, transport: transport)
        self.sessions = SessionManager(sessions: sessions ?? store, api: api, now: { Int64(Date().timeIntervalSince1970) })
        engine = SyncEngine(store: store, api: api, session: self.sessions, now: { Int64(Date().timeIntervalSince1970 * 1_000_000) })
    }

    /// The signed-in user's id, nil when signed out.
    public var userID: UUID? { (try? sessions.current())?.flatMap { UUID(uuidString: $0.userID) } }

    /// Pushes the waiting writes and pulls what changed. A failure (offline, a refusal) is in `engine.status`, and
    /// every local write is kept for the next sync: views call this and never lose anything by it.
    public func syncNow() async {
        _ = try? await engine.sync(tables: Self.tables)
    }
}

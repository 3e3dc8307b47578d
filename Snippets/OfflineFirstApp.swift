// "An offline-first iOS app in 15 minutes" (the CaravanClient article GettingStarted.md): a places app's store,
// sign-in, a live list, an offline favorite, the sync line and refusals. `swift build` compiles this file, so the
// article's code cannot drift from the API; Examples/PlacesKit is the whole app's view models, tested on Linux.

import CaravanClient
import CaravanClientModels
import CaravanCore
import Foundation
import Places

// snippet.hide
let anonKey = ProcessInfo.processInfo.environment["CARAVAN_ANON_KEY"] ?? ""
let appleIdentityToken = "", rawNonce = ""
func show(_ places: [Place]) {}
func showBanner(_ text: String) {}
func gettingStarted() async throws {
// snippet.show
// snippet.store
// The store lives in the app group's folder, so the app's widgets and intents can open it too.
let folder = FileManager.default.temporaryDirectory.path        // containerURL(forSecurityApplicationGroupIdentifier:) on iOS
let tables = PlacesModule.module.tables.filter { ["places", "favorites"].contains($0.name) }
let store = try LocalStore(path: folder + "/places.sqlite", tables: tables)
let api = CaravanAPI(baseURL: "http://127.0.0.1:8080", apiKey: anonKey, transport: AsyncHTTPClientTransport())  // URLSessionTransport() on iOS

// snippet.session
// The session survives relaunches: the Keychain on Apple platforms (KeychainSessionStore), a 0600 file on Linux.
let sessions = SessionManager(sessions: FileSessionStore(path: folder + "/session.json"), api: api,
                              now: { Int64(Date().timeIntervalSince1970) })
if try sessions.current() == nil {
    try await sessions.signInWithApple(idToken: appleIdentityToken, nonce: rawNonce)   // or signInAnonymously(), sendCode(to:)…
}
let engine = SyncEngine(store: store, api: api, session: sessions, now: { Int64(Date().timeIntervalSince1970 * 1_000_000) })

// snippet.live
// The list: read from the device, updated after every committed change (a sync, realtime, a local write).
for try await cafes in try store.live(Place.self, where: .column(Place.CodingKeys.category, .eq, "cafe"),
                                      order: [OrderTerm(Place.CodingKeys.googleRating, .descending, nulls: .last)], limit: 50) {
    show(cafes)
    break
}

// snippet.write
// A favorite, offline or not: in the list at once, queued in the outbox, sent once by the next sync.
guard let me = try sessions.current().flatMap({ UUID(uuidString: $0.userID) }) else { return }
try await store.insert(Favorite(id: UUID(), userID: me, placeID: "najd-village"))
_ = try? await engine.sync(tables: ["places", "favorites"])   // offline: the write waits; the status says so

// snippet.status
// What to show at the bottom of the screen (ObservedSyncStatus(engine.status) in SwiftUI).
let status = engine.status.current
let line = status.lastError.map { "Sync failed (\($0.code))" } ?? (status.pending > 0 ? "\(status.pending) waiting" : "Up to date")

// snippet.refusals
// A write the server refuses (a policy, a missing place) leaves the list by itself; tell the user why.
for await refusal in engine.rejections() {
    showBanner("Not saved (\(refusal.code)): \(refusal.message)")
}
// snippet.hide
_ = line
}

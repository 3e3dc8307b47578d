public import CaravanClient
public import CaravanClientModels
import CaravanCore
public import Foundation
import Places
public import Observation

/// The signed-in user's favorites: a live query of the local store, and a toggle that writes at once — offline too —
/// and syncs in the background. A favorite the server refuses comes back out of the list by itself (the row is put
/// back to the server's state) and is named in `lastRefusal`.
@MainActor
@Observable
public final class FavoritesModel {
    /// The most recent favorite the server refused (its code and message), for a banner.
    public private(set) var lastRefusal: RejectedWrite?
    @ObservationIgnored private let client: PlacesClient
    @ObservationIgnored private let query: LiveQuery<Favorite>
    @ObservationIgnored private var following: Task<Void, Never>?

    public init(client: PlacesClient) throws {
        self.client = client
        query = try LiveQuery(client.store, Favorite.self, order: [OrderTerm(Favorite.CodingKeys.createdAt, .descending)])
        let refusals = client.engine.rejections()
        following = Task { [weak self] in
            for await refusal in refusals where refusal.table == Favorite.table.name {
                self?.lastRefusal = refusal
            }
        }
    }

    isolated deinit { following?.cancel() }

    public var favorites: [Favorite] { query.records }

    public func isFavorite(_ place: Place) -> Bool { favorites.contains { $0.placeID == place.id } }

    /// Adds or removes `place` from the favorites: written to the store at once (the list shows it), queued in the
    /// outbox, then a background sync. A `photo` (JPEG) is queued with the favorite in the same transaction: the two
    /// wait together offline and go up exactly once (`FavoritePhotoModel` shows it). Throws only when the device
    /// itself refuses the write (signed out, a bad row).
    public func toggle(_ place: Place, note: String? = nil, photo: Data? = nil) async throws {
        if let existing = favorites.first(where: { $0.placeID == place.id }) {
            try await client.store.delete(existing)
        } else {
            guard let userID = client.userID else { throw ClientError(.unauthorized, "sign in to keep favorites") }
            let favorite = Favorite(id: UUID(), userID: userID, placeID: place.id, note: note)
            let attaching = try photo.map { [try client.store.stageUpload($0, bucket: PlacesBuckets.photos.id, path: FavoritePhotoModel.path(of: favorite),
                                                                          contentType: "image/jpeg")] } ?? []
            try await client.store.insert(favorite, attaching: attaching)
        }
        Task { await client.syncNow() }
    }
}

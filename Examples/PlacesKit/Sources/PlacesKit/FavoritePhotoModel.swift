public import CaravanClientModels
import CaravanClient
import CaravanCore
public import Foundation
public import Observation
import Places

/// The photo kept with a favorite: the device's copy when it has one (offline too, once fetched or taken here),
/// else downloaded and kept within the store's attachment budget.
@MainActor
@Observable
public final class FavoritePhotoModel {
    public let favorite: Favorite
    /// The photo's bytes once loaded; nil before, or when the favorite has none.
    public private(set) var photo: Data?
    /// Why the photo could not be shown (offline and never fetched, no photo on the server).
    public private(set) var error: (any Error)?
    @ObservationIgnored private let client: PlacesClient

    public init(client: PlacesClient, favorite: Favorite) {
        self.client = client
        self.favorite = favorite
    }

    /// Where a favorite's photo lives in the `place-photos` bucket: under its owner's id, as the bucket requires.
    public nonisolated static func path(of favorite: Favorite) -> String {
        favorite.userID.uuidString.lowercased() + "/" + favorite.id.uuidString.lowercased() + ".jpg"
    }

    public func load() async {
        do {
            photo = try await client.engine.attachment(bucket: PlacesBuckets.photos.id, path: Self.path(of: favorite))
            error = nil
        } catch {
            self.error = error
        }
    }
}

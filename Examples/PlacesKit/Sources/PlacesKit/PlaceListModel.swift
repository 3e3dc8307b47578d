public import CaravanClient
public import CaravanClientModels
import CaravanCore
public import Observation

/// The list screen: the best-rated places of a category, from the local store, live. It is filled by the first
/// sync, works offline, and follows every change a sync or a local write commits.
@MainActor
@Observable
public final class PlaceListModel {
    /// The category shown (`cafe`, `restaurant`, …); nil: every place.
    public var category: String? {
        didSet { if category != oldValue { follow() } }
    }
    /// How many places the list shows.
    public let limit: Int
    @ObservationIgnored private let client: PlacesClient
    @ObservationIgnored private var query: LiveQuery<Place>?

    public init(client: PlacesClient, category: String? = nil, limit: Int = 50) {
        self.client = client
        self.category = category
        self.limit = limit
        follow()
    }

    /// The places to show, best rated first.
    public var places: [Place] { query?.records ?? [] }
    /// Whether the store has answered once (before that, show a placeholder, not "no places").
    public var isLoaded: Bool { query?.isLoaded ?? false }
    /// Why the list stopped following the store, if it did.
    public var error: (any Error)? { query?.error }

    private func follow() {
        query?.cancel()
        let filter: Predicate = category.map { .column(Place.CodingKeys.category, .eq, $0) } ?? .constant(true)
        do {
            query = try LiveQuery(client.store, Place.self, where: filter,
                                  order: [OrderTerm(Place.CodingKeys.googleRating, .descending, nulls: .last), OrderTerm(Place.CodingKeys.id, .ascending)],
                                  limit: limit)
        } catch {
            query = nil
        }
    }
}

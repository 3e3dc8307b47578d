#if canImport(SwiftUI)
import CaravanClient
import CaravanClientModels
import SwiftUI

/// The places list: a category picker, the live list with a favorite star per row, and the sync line at the bottom.
/// (Apple platforms only; the view models under it are what the Linux tests drive.)
public struct PlacesScreen: View {
    @State private var list: PlaceListModel
    @State private var favorites: FavoritesModel
    @State private var badge: SyncBadgeModel
    private let client: PlacesClient

    public init(client: PlacesClient) throws {
        self.client = client
        _list = State(initialValue: PlaceListModel(client: client, category: "cafe"))
        _favorites = State(initialValue: try FavoritesModel(client: client))
        _badge = State(initialValue: SyncBadgeModel(client: client))
    }

    public var body: some View {
        NavigationStack {
            List(list.places, id: \.id) { place in
                NavigationLink(value: place.id) {
                    HStack {
                        VStack(alignment: .leading) {
                            Text(place.nameEn ?? place.nameAr).font(.headline)
                            if let rating = place.googleRating { Text("★ \(rating.formatted())").font(.caption) }
                        }
                        Spacer()
                        Button {
                            Task { try? await favorites.toggle(place) }
                        } label: {
                            Image(systemName: favorites.isFavorite(place) ? "heart.fill" : "heart")
                        }
                        .buttonStyle(.borderless)
                    }
                }
            }
            .navigationDestination(for: String.self) { id in
                if let place = list.places.first(where: { $0.id == id }) { PlacePhotoView(client: client, place: place) }
            }
            .overlay { if !list.isLoaded { ProgressView() } }
            .refreshable { await client.syncNow() }
            .navigationTitle("Riyadh")
            .toolbar {
                Picker("Category", selection: $list.category) {
                    Text("Cafés").tag(Optional("cafe"))
                    Text("Restaurants").tag(Optional("restaurant"))
                    Text("All").tag(String?.none)
                }
            }
            .safeAreaInset(edge: .bottom) { Text(badge.text).font(.footnote).padding(6) }
        }
        .task { await client.syncNow() }
    }
}
#endif

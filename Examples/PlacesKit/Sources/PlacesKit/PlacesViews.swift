#if canImport(SwiftUI)
import CaravanClient
import CaravanClientModels
import Foundation
public import SwiftUI
#if canImport(UIKit)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

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
                if let favorite = favorites.favorites.first(where: { $0.placeID == id }) {
                    FavoritePhotoView(model: FavoritePhotoModel(client: client, favorite: favorite))
                } else {
                    Text("Keep this place to add a photo")
                }
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
        // The widget and the intents write the same store: their writes show here and go up with the next sync.
        .task { try? await client.store.followOtherProcesses(every: .milliseconds(500)) }
    }
}
/// The photo kept with a favorite, from the device when it has it (offline too).
public struct FavoritePhotoView: View {
    @State var model: FavoritePhotoModel

    public var body: some View {
        Group {
            if let photo = model.photo, let image = Image(data: photo) {
                image.resizable().scaledToFit()
            } else if model.error != nil {
                ContentUnavailableView("No photo yet", systemImage: "photo")
            } else {
                ProgressView()
            }
        }
        .task { await model.load() }
    }
}

extension Image {
    /// An image from encoded bytes (JPEG, PNG, WebP), on UIKit or AppKit.
    init?(data: Data) {
        #if canImport(UIKit)
        guard let image = UIImage(data: data) else { return nil }
        self.init(uiImage: image)
        #elseif canImport(AppKit)
        guard let image = NSImage(data: data) else { return nil }
        self.init(nsImage: image)
        #else
        return nil
        #endif
    }
}
#endif

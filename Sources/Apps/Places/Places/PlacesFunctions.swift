package import CaravanCore

/// The places module's RPC functions. Each runs in the caller's transaction, under the caller's policies.
package enum PlacesFunctions {
    /// `count_places(cat text default null) → bigint`: places the caller can see, optionally in one category.
    static let countPlaces = RPCFunction("count_places", parameters: [RPCParameter("cat", .text, default: .null)], readOnly: true) { arguments, transaction in
        var query = Query(select: [.column(name: "id", alias: nil, cast: nil)], limit: 0)
        if let category = arguments.text("cat") { query.filters = [.column("category", .eq, category)] }
        let table = PlacesSchema.places
        let plan = try ReadPlan(table: table, query: query, access: try transaction.access.readRule(table), maxRows: nil, includeCount: true)
        return .scalar(.integer(Int64(try await transaction.fetch(plan).totalCount ?? 0)))
    }

    /// `places_in_category(cat text) → setof places`.
    static let placesInCategory = RPCFunction("places_in_category", parameters: [RPCParameter("cat", .text)], readOnly: true) { arguments, _ in
        let category = try PlacesSchema.places.requireColumn("category")
        return .rows(of: PlacesSchema.places, where: .compare(category, .eq, arguments["cat"]))
    }

    /// `toggle_favorite(place_id text, note text default null) → boolean`: adds the caller's favorite, or removes it
    /// if it exists; returns whether the place is now a favorite. Anonymous callers are refused (42501).
    static let toggleFavorite = RPCFunction(
        "toggle_favorite", parameters: [RPCParameter("place_id", .text), RPCParameter("note", .text, default: .null)], readOnly: false
    ) { arguments, transaction in
        guard let userID = transaction.access.identity.userID else {
            throw CaravanError(.permissionDenied, "permission denied for function toggle_favorite")
        }
        let table = PlacesSchema.favorites
        let mine = BoundPredicate.and([
            .compare(try table.requireColumn("user_id"), .eq, .text(userID)),
            .compare(try table.requireColumn("place_id"), .eq, arguments["place_id"]),
        ])
        if try await transaction.delete(from: table, where: mine).deleted > 0 { return .scalar(.bool(false)) }
        let row = RowValues(["user_id": .text(userID), "place_id": arguments["place_id"], "note": arguments["note"]])
        _ = try await transaction.insert([row], into: table, conflict: nil)
        return .scalar(.bool(true))
    }

    /// `refresh_category_counts() → void`: sets `categories.places_count` from the active places. Writes only what
    /// the caller's policies allow (admins and the service role).
    static let refreshCategoryCounts = RPCFunction("refresh_category_counts", parameters: [], readOnly: false) { _, transaction in
        try await refreshCategoryCounts(in: transaction)
        return .void
    }

    /// Sets every visible category's `places_count` to its number of active places.
    static func refreshCategoryCounts(in transaction: any StoreTransaction) async throws {
        try await transaction.serialize(on: "places.category-counts")
        let categories = PlacesSchema.categories
        let places = PlacesSchema.places
        let listing = try ReadPlan(table: categories, query: Query(select: [.column(name: "id", alias: nil, cast: nil)]),
                                   access: try transaction.access.readRule(categories), maxRows: nil, includeCount: false)
        for row in try await transaction.fetch(listing).rows {
            guard case .text(let id) = row[0] else { continue }
            let counting = try ReadPlan(
                table: places,
                query: Query(select: [.column(name: "id", alias: nil, cast: nil)], filters: [.column("category", .eq, id), .column("is_active", .eq, "true")], limit: 0),
                access: .constant(true), maxRows: nil, includeCount: true
            )
            let count = try await transaction.fetch(counting).totalCount ?? 0
            _ = try await transaction.update(categories, set: RowValues(["places_count": .integer(Int64(count))]),
                                       where: .compare(try categories.requireColumn("id"), .eq, .text(id)))
        }
    }

    /// `category_counts() → table(category text, places bigint)`: how many places the caller can see per category.
    static let categoryCounts = RPCFunction("category_counts", parameters: [], readOnly: true) { _, transaction in
        let table = PlacesSchema.places
        let plan = try ReadPlan(table: table, query: Query(select: [.column(name: "category", alias: nil, cast: nil)]),
                                access: try transaction.access.readRule(table), maxRows: nil, includeCount: false)
        var counts: [String: Int64] = [:]
        for row in try await transaction.fetch(plan).rows {
            if case .text(let category) = row[0] { counts[category, default: 0] += 1 }
        }
        let rows: [[Value]] = counts.keys.sorted().map { [.text($0), .integer(counts[$0] ?? 0)] }
        return .table(columns: [Column("category", .text), Column("places", .integer)], rows: rows)
    }

    package static let all = [countPlaces, placesInCategory, toggleFavorite, refreshCategoryCounts, categoryCounts,
                             PlacesSearch.searchPlaces, PlacesSearch.nearbyPlaces]
}

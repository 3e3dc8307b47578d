package import CaravanCore

/// The search columns of `countries` and `cities`, derived by the write pipeline from the names on every insert and
/// update (whatever the write path: import, REST, RPC, sync), so they can never disagree with the names.
package enum TravelLogSearchColumns {
    /// `text` folded as everywhere in Caravan, or "" for NULL.
    static func folded(_ value: Value) -> Value {
        if case .text(let text) = value { return .text(TextFolding.fold(text)) }
        return .text("")
    }

    /// The distinct folded tokens of `names`, each preceded by one space (` zurich zuerich`): a token starts
    /// with `q` exactly when the column contains ` q`. Tokens hold letters, digits and marks only, never a space.
    package static func tokenColumn(_ names: [String?]) -> String {
        var seen: Set<String> = []
        var result = ""
        for name in names.compactMap({ $0 }) {
            for token in TextFolding.tokens(in: name) where seen.insert(token).inserted {
                result += " " + token
            }
        }
        return result
    }

    /// The distinct folded tokens of a city's names.
    static func cityNameTokens(_ city: StoredRow) -> Set<String> {
        Set([city.text("display_name"), city.text("plain_name"), city.text("name_ar")].compactMap { $0 }.flatMap { TextFolding.tokens(in: $0) })
    }

    /// Keeps `city_name_tokens` equal to the tokens of each written city: inserted with a new city, replaced when an
    /// update changes them (a re-import that changes no name writes nothing), deleted with the city (ON DELETE
    /// CASCADE).
    @Sendable static func keepCityNameTokens(_ write: RowWrite, in transaction: any StoreTransaction) async throws {
        guard let city = write.new else { return }
        let tokens = cityNameTokens(city)
        if let old = write.old {
            guard cityNameTokens(old) != tokens || old["id"] != city["id"] else { return }
            let table = TravelLogSchema.cityNameTokens
            _ = try await transaction.delete(from: table, where: .compare(try table.requireColumn("city_id"), .eq, old["id"]))
        }
        guard !tokens.isEmpty else { return }
        let rows = tokens.sorted().map { RowValues(["city_id": city["id"], "token": .text($0)]) }
        _ = try await transaction.insert(rows, into: TravelLogSchema.cityNameTokens, conflict: nil)
    }

    package static let behaviours = [
        TableBehaviour("countries", derived: [
            DerivedColumn("search_name") { folded($0["name"]) },
            DerivedColumn("search_ar") { folded($0["name_ar"]) },
            DerivedColumn("search_code") { folded($0["country_code"]) },
            DerivedColumn("search_tokens") { row in
                .text(tokenColumn([row.text("name"), row.text("name_ar"), row.text("country_code")]))
            },
        ]),
        TableBehaviour("cities", derived: [
            DerivedColumn("search_display") { folded($0["display_name"]) },
            DerivedColumn("search_plain") { folded($0["plain_name"]) },
            DerivedColumn("search_ar") { folded($0["name_ar"]) },
        ], afterWrite: keepCityNameTokens),
        TableBehaviour("user_city", defaultsToCaller: ["user_id"]),
        TableBehaviour("user_place", defaultsToCaller: ["user_id"]),
    ]
}

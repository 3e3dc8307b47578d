import CaravanCore

/// The search columns of `countries` and `cities`, derived by the write pipeline from the names on every insert and
/// update (whatever the write path: import, REST, RPC, sync), so they can never disagree with the names.
public enum TravelLogSearchColumns {
    /// `text` folded as everywhere in Caravan, or "" for NULL.
    static func folded(_ value: Value) -> Value {
        if case .text(let text) = value { return .text(TextFolding.fold(text)) }
        return .text("")
    }

    /// The distinct folded tokens of `names`, each preceded by one space (` zurich zuerich`): a token starts
    /// with `q` exactly when the column contains ` q`. Tokens hold letters, digits and marks only, never a space.
    public static func tokenColumn(_ names: [String?]) -> String {
        var seen: Set<String> = []
        var result = ""
        for name in names.compactMap({ $0 }) {
            for token in TextFolding.tokens(in: name) where seen.insert(token).inserted {
                result += " " + token
            }
        }
        return result
    }

    public static let behaviours = [
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
            DerivedColumn("search_tokens") { row in
                .text(tokenColumn([row.text("display_name"), row.text("plain_name"), row.text("name_ar")]))
            },
        ]),
        TableBehaviour("user_city", defaultsToCaller: ["user_id"]),
        TableBehaviour("user_place", defaultsToCaller: ["user_id"]),
    ]
}

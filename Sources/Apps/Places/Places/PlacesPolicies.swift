package import CaravanCore

/// The places design's row-level security (§3.4), as Caravan policies.
///
/// Two deliberate differences from the design's SQL, each shown by a test:
/// - `places_admin_write` tests `auth.jwt() ->> 'role' = 'admin'`, but that claim is always `authenticated` in a
///   Supabase token, so no one could ever write. The intent — an admin app role — lives in `app_metadata.role`
///   (settable only by the service role), and that is what is checked.
/// - The design gives `areas` and `categories` no policy. They are reference data the app lists, so they are read by
///   everyone and written by admins, like `places`. `menu_prices` and `perfumes` stay closed (service role only).
package enum PlacesPolicies {
    static let isAdmin = PolicyRule.compare(.claim(["app_metadata", "role"]), .eq, .literal(.text("admin")))
    static let everyone: Set<Role> = [.anon, .authenticated]

    static func readableByAll(_ table: String) -> TablePolicy {
        TablePolicy("\(table)_read", for: [.select], to: everyone, using: .always(true))
    }

    static func writableByAdmins(_ table: String) -> TablePolicy {
        TablePolicy("\(table)_admin_write", for: TablePolicy.allCommands, to: [.authenticated], using: isAdmin)
    }

    package static let all: [String: [TablePolicy]] = [
        "places": [
            TablePolicy("places_read", for: [.select], to: everyone, using: .compare(.column("is_active"), .eq, .literal(.bool(true)))),
            writableByAdmins("places"),
        ],
        "areas": [readableByAll("areas"), writableByAdmins("areas")],
        "categories": [readableByAll("categories"), writableByAdmins("categories")],
        "favorites": [
            TablePolicy("favorites_own", for: TablePolicy.allCommands, to: [.authenticated], using: .ownedBy("user_id")),
        ],
        "reviews": [
            readableByAll("reviews"),
            TablePolicy("reviews_own_write", for: [.insert], to: [.authenticated], check: .ownedBy("user_id")),
            TablePolicy("reviews_own_update", for: [.update], to: [.authenticated], using: .ownedBy("user_id")),
        ],
        "delivery_prices": [readableByAll("delivery_prices")],
    ]
}

package import CaravanCore

/// `user_city` and `user_place` belong to their user for every command; `cities` and `countries`
/// are read by everyone and written by the service role only (no write policy: closed to every other role).
///
/// "A place's city row must be the caller's too" holds by construction: `user_place(user_id, city_id)` references
/// `user_city(user_id, city_id)`, and the policy makes `user_id` the caller.
package enum TravelLogPolicies {
    static let everyone: Set<Role> = [.anon, .authenticated]

    package static let all: [String: [TablePolicy]] = [
        "countries": [TablePolicy("countries_read", for: [.select], to: everyone, using: .always(true))],
        "cities": [TablePolicy("cities_read", for: [.select], to: everyone, using: .always(true))],
        "user_city": [TablePolicy("user_city_own", for: TablePolicy.allCommands, to: [.authenticated], using: .ownedBy("user_id"))],
        "user_place": [TablePolicy("user_place_own", for: TablePolicy.allCommands, to: [.authenticated], using: .ownedBy("user_id"))],
    ]
}

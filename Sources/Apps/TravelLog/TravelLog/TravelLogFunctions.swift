package import CaravanCore

/// The design's user functions. Each runs in the caller's transaction under the caller's
/// policies: a user reads and writes only their own `user_city` and `user_place` rows.
package enum TravelLogFunctions {
    static let userCity = TravelLogSchema.userCity
    static let userPlace = TravelLogSchema.userPlace

    /// The caller's user id, or 42501 for a caller without one.
    static func caller(_ transaction: any StoreTransaction, function: String) throws(CaravanError) -> String {
        guard let userID = transaction.access.identity.userID else {
            throw CaravanError(.permissionDenied, "permission denied for function \(function)", hint: "sign in first")
        }
        return userID
    }

    /// `city_id` as an integer, or 22023.
    static func cityID(_ arguments: RPCArguments) throws(CaravanError) -> Int64 {
        guard case .integer(let id) = arguments["city_id"] else {
            throw CaravanError(.invalidParameterValue, "city_id must not be null")
        }
        return id
    }

    /// Rows of `table` matching `filter` under the caller's read policy, ordered by `order`, as dictionaries.
    static func read(_ table: TableSchema, _ filter: BoundPredicate, order: [OrderTerm] = [], in transaction: any StoreTransaction) async throws -> [[String: Value]] {
        let plan = try ReadPlan(table: table, query: Query(order: order),
                                access: BoundPredicate.and([try transaction.access.readRule(table), filter]).simplified,
                                maxRows: nil, includeCount: false)
        let result = try await transaction.fetch(plan)
        return result.rows.map { Dictionary(uniqueKeysWithValues: zip(result.outputs.map(\.name), $0)) }
    }

    /// The caller's `user_city` row for `cityID` (policies keep it to the caller's rows).
    static func mine(_ cityID: Int64, userID: String) throws -> BoundPredicate {
        .and([.compare(try userCity.requireColumn("user_id"), .eq, .text(userID)),
              .compare(try userCity.requireColumn("city_id"), .eq, .integer(cityID))])
    }

    static func object(_ row: [String: Value], _ columns: [Column]) -> JSONValue {
        .object(columns.map { ($0.name, JSONValue(row[$0.name] ?? .null)) })
    }

    /// `user_cities(visited boolean default null) → json`: the caller's cities, newest first, each
    /// `{…user_city columns, "city": {…cities columns}}`; `visited` keeps visited (true) or bucket-list (false) rows.
    static let userCities = RPCFunction("user_cities", parameters: [RPCParameter("visited", .boolean, default: .null)], readOnly: true) { arguments, transaction in
        let userID = try caller(transaction, function: "user_cities")
        var filter = BoundPredicate.compare(try userCity.requireColumn("user_id"), .eq, .text(userID))
        if case .bool(let visited) = arguments["visited"] { filter = .and([filter, .isBool(try userCity.requireColumn("visited"), visited)]) }
        let rows = try await read(userCity, filter, order: [OrderTerm(column: "created_at", direction: .descending), OrderTerm(column: "city_id")], in: transaction)
        let cityIDs = rows.compactMap { $0["city_id"] }
        let cities = TravelLogSchema.cities
        let cityColumns = TravelLogSearch.cityTarget.outputs.compactMap { cities.column(named: $0) }
        var cityByID: [Value: [String: Value]] = [:]
        if !cityIDs.isEmpty {
            for city in try await read(cities, .inList(try cities.requireColumn("id"), cityIDs), in: transaction) { cityByID[city["id"] ?? .null] = city }
        }
        let items: [JSONValue] = rows.map { row in
            guard case .object(var pairs) = object(row, userCity.columns) else { return .null }
            pairs.append(("city", cityByID[row["city_id"] ?? .null].map { object($0, cityColumns) } ?? .null))
            return .object(pairs)
        }
        return .scalar(.json(JSONValue.array(items).jsonText))
    }

    /// `user_city_places(city_id bigint) → json`: the caller's places in a city grouped by category,
    /// `{"hotel": […], "restaurant": […], "activity": […], "shop": […]}`, each group by name then id.
    static let userCityPlaces = RPCFunction("user_city_places", parameters: [RPCParameter("city_id", .integer)], readOnly: true) { arguments, transaction in
        let userID = try caller(transaction, function: "user_city_places")
        let filter = BoundPredicate.and([.compare(try userPlace.requireColumn("user_id"), .eq, .text(userID)),
                                         .compare(try userPlace.requireColumn("city_id"), .eq, .integer(try cityID(arguments)))])
        let places = try await read(userPlace, filter, order: [OrderTerm(column: "name"), OrderTerm(column: "id")], in: transaction)
        let groups: [(String, JSONValue)] = TravelLogSchema.placeCategories.map { category in
            (category, .array(places.filter { $0["category"] == .text(category) }.map { object($0, userPlace.columns) }))
        }
        return .scalar(.json(JSONValue.object(groups).jsonText))
    }

    /// `mark_city_visited(city_id bigint, rating float8 default null) → setof user_city`: the caller's row for the
    /// city becomes visited with `rating` (inserted when absent, notes kept when present).
    static let markCityVisited = RPCFunction("mark_city_visited", parameters: [
        RPCParameter("city_id", .integer), RPCParameter("rating", .double, default: .null),
    ], readOnly: false) { arguments, transaction in
        let userID = try caller(transaction, function: "mark_city_visited")
        let id = try cityID(arguments)
        let row = RowValues(["user_id": .text(userID), "city_id": .integer(id), "visited": .bool(true), "rating": arguments["rating"]])
        _ = try await transaction.insert([row], into: userCity, conflict: ConflictTarget(columns: ["user_id", "city_id"], resolution: .merge))
        return .rows(of: userCity, where: try mine(id, userID: userID))
    }

    package static let all = [userCities, userCityPlaces, markCityVisited, TravelLogUserCityWrites.addUserCity,
                             TravelLogUserCityWrites.removeUserCity]
}

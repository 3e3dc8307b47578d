import CaravanCore

/// `add_user_city` and `remove_user_city`: the two writes that touch a city row and its places together.
package enum TravelLogUserCityWrites {
    static let userCity = TravelLogSchema.userCity
    static let userPlace = TravelLogSchema.userPlace
    /// The fields a place of `add_user_city` may carry.
    static let placeFields = ["name", "latitude", "longitude", "category", "liked"]

    /// `add_user_city(city_id bigint, visited boolean default false, rating float8 default null, notes text default
    /// null, places json default '[]') → setof user_city`: the caller's city row and its places, in one transaction
    /// (a bad place rolls the city back too). `places` is an array of `{name, latitude, longitude, category, liked}`.
    static let addUserCity = RPCFunction("add_user_city", parameters: [
        RPCParameter("city_id", .integer),
        RPCParameter("visited", .boolean, default: .bool(false)),
        RPCParameter("rating", .double, default: .null),
        RPCParameter("notes", .text, default: .null),
        RPCParameter("places", .json, default: .json("[]")),
    ], readOnly: false) { arguments, transaction in
        let userID = try TravelLogFunctions.caller(transaction, function: "add_user_city")
        let cityID = try TravelLogFunctions.cityID(arguments)
        let places = try placeRows(arguments["places"], userID: userID, cityID: cityID)
        let visited = arguments["visited"] == .null ? Value.bool(false) : arguments["visited"]
        let row = RowValues(["user_id": .text(userID), "city_id": .integer(cityID), "visited": visited,
                             "rating": arguments["rating"], "notes": arguments["notes"]])
        _ = try await transaction.insert([row], into: userCity, conflict: nil)
        if !places.isEmpty { _ = try await transaction.insert(places, into: userPlace, conflict: nil) }
        return .rows(of: userCity, where: try TravelLogFunctions.mine(cityID, userID: userID))
    }

    /// The `user_place` rows of the `places` argument, or 22023 naming the bad element and field.
    static func placeRows(_ argument: Value, userID: String, cityID: Int64) throws -> [RowValues] {
        guard case .json(let text) = argument else { return [] }
        guard case .array(let items) = try JSONParser.parse(text) else {
            throw CaravanError(.invalidParameterValue, "places must be a JSON array of places")
        }
        var rows: [RowValues] = []
        for (index, item) in items.enumerated() {
            guard case .object(let pairs) = item else {
                throw CaravanError(.invalidParameterValue, "places[\(index)] must be an object")
            }
            var row = RowValues(["user_id": .text(userID), "city_id": .integer(cityID)])
            for (key, json) in pairs {
                guard placeFields.contains(key), let column = userPlace.column(named: key) else {
                    throw CaravanError(.invalidParameterValue, "places[\(index)].\(key) is not a field of a place",
                                       hint: "a place has \(placeFields.joined(separator: ", "))")
                }
                do {
                    row.set(key, try column.type.value(fromJSON: json))
                } catch {
                    throw CaravanError(.invalidParameterValue, "places[\(index)].\(key): \(error.message)")
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// `remove_user_city(city_id bigint) → json`: deletes the caller's row for the city and its places, and when
    /// the row was visited with a rating > 0 re-spreads the remaining ratings (`RatingAdjustment`); one transaction.
    /// Returns `{"removed": city_id, "adjusted": [{"city_id", "old", "new"}]}`; P0002 when the caller has no such row.
    static let removeUserCity = RPCFunction("remove_user_city", parameters: [RPCParameter("city_id", .integer)], readOnly: false) { arguments, transaction in
        let userID = try TravelLogFunctions.caller(transaction, function: "remove_user_city")
        let cityID = try TravelLogFunctions.cityID(arguments)
        // One user's removals run one after the other: each re-spreads the ratings the other left.
        try await transaction.serialize(on: "travel-log.user-city:\(userID)")
        let deleted = try await transaction.delete(from: userCity, where: try TravelLogFunctions.mine(cityID, userID: userID))
        guard let removed = deleted.rows.first.map({ StoredRow(table: userCity, values: $0) }) else {
            throw CaravanError(.notFound, "city \(cityID) is not in your list")
        }
        var changes: [RatingAdjustment.Change] = []
        if removed["visited"] == .bool(true), case .double(let rating) = removed["rating"], rating > 0 {
            changes = try await adjustRemaining(userID: userID, in: transaction)
        }
        let adjusted: [JSONValue] = changes.map {
            .object([("city_id", .integer($0.cityID)), ("old", .double($0.old)), ("new", .double($0.new))])
        }
        return .scalar(.json(JSONValue.object([("removed", .integer(cityID)), ("adjusted", .array(adjusted))]).jsonText))
    }

    /// Applies the rating rule to the caller's remaining visited, rated rows; returns what changed.
    static func adjustRemaining(userID: String, in transaction: any StoreTransaction) async throws -> [RatingAdjustment.Change] {
        let filter = BoundPredicate.and([
            .compare(try userCity.requireColumn("user_id"), .eq, .text(userID)),
            .isBool(try userCity.requireColumn("visited"), true),
            .compare(try userCity.requireColumn("rating"), .gt, .double(0)),
        ])
        let remaining = try await TravelLogFunctions.read(userCity, filter, in: transaction).compactMap { row -> RatingAdjustment.RatedCity? in
            guard case .integer(let id) = row["city_id"], case .double(let rating) = row["rating"],
                  case .text(let created) = row["created_at"] else { return nil }
            return RatingAdjustment.RatedCity(cityID: id, rating: rating, createdAt: created)
        }
        let changes = RatingAdjustment.adjust(remaining)
        for change in changes {
            _ = try await transaction.update(userCity, set: RowValues(["rating": .double(change.new)]),
                                       where: try TravelLogFunctions.mine(change.cityID, userID: userID))
        }
        return changes
    }
}

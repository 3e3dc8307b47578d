package import CaravanCore

/// The transit bundle's questions as read-only RPC functions (`caravan serve --transit BUNDLE`):
/// `search_stops(query, limit)`, `next_departures(stop_id, at, limit)`, `routes_by_type(route_type)` and
/// `trip_stops(trip_id)`. Each returns a table, so PostgREST filters, order, paging and `single()` apply to it.
package enum TransitFunctions {
    /// An app module with no tables, whose functions answer from `database`.
    package static func module(database: any TransitQuestions) -> AppModule {
        AppModule(name: "transit", tables: [], migrations: [], functions: functions(database))
    }

    static let stopColumns = [
        Column("stop_id", .text), Column("stop_code", .text), Column("stop_name", .text), Column("stop_lat", .double),
        Column("stop_lon", .double), Column("location_type", .integer), Column("parent_station", .text),
    ]
    static let departureColumns = [
        Column("trip_id", .text), Column("route_id", .text), Column("route_short_name", .text), Column("route_long_name", .text),
        Column("route_type", .integer), Column("headsign", .text), Column("departure_time", .text), Column("service_date", .text),
        Column("departs_at", .text), Column("stop_sequence", .integer), Column("interpolated", .boolean),
    ]
    static let routeColumns = [
        Column("route_id", .text), Column("agency_id", .text), Column("route_short_name", .text), Column("route_long_name", .text),
        Column("route_type", .integer), Column("route_color", .text), Column("route_text_color", .text),
    ]
    static let tripStopColumns = [
        Column("stop_sequence", .integer), Column("stop_id", .text), Column("stop_name", .text), Column("arrival_time", .text),
        Column("departure_time", .text), Column("interpolated", .boolean), Column("pickup_type", .integer), Column("drop_off_type", .integer),
    ]

    /// Rows in `columns` order from the items' wire objects.
    static func table(_ columns: [Column], _ items: [JSONValue]) -> RPCResult {
        let rows: [[Value]] = items.map { item in
            columns.map { column in
                switch item[column.name] {
                case .string(let s)?: .text(s)
                case .integer(let i)?: column.type == .double ? .double(Double(i)) : .integer(i)
                case .double(let d)?: .double(d)
                case .bool(let b)?: .bool(b)
                case .array?, .object?: .json(item[column.name]?.jsonText ?? "null")
                case .null?, nil: .null
                }
            }
        }
        return .table(columns: columns, rows: rows)
    }

    static func integer(_ arguments: RPCArguments, _ name: String) throws(CaravanError) -> Int {
        guard case .integer(let value) = arguments[name], let int = Int(exactly: value) else {
            throw CaravanError(.invalidValue, "argument \(name) must be an integer")
        }
        return int
    }

    static func text(_ arguments: RPCArguments, _ name: String) throws(CaravanError) -> String {
        guard let value = arguments.text(name) else { throw CaravanError(.invalidValue, "argument \(name) must not be null") }
        return value
    }

    static func functions(_ database: any TransitQuestions) -> [RPCFunction] {
        [
            RPCFunction("search_stops", parameters: [RPCParameter("query", .text), RPCParameter("limit", .integer, default: .integer(20))], readOnly: true) { arguments, _ in
                let stops = try database.searchStops(try text(arguments, "query"), limit: try integer(arguments, "limit"))
                return table(stopColumns, stops.map(\.jsonValue))
            },
            RPCFunction("next_departures", parameters: [RPCParameter("stop_id", .text), RPCParameter("at", .text), RPCParameter("limit", .integer, default: .integer(10))],
                        readOnly: true) { arguments, _ in
                let at = try LocalDateTime(parsing: try text(arguments, "at"))
                let departures = try database.nextDepartures(fromStop: try text(arguments, "stop_id"), at: at, limit: try integer(arguments, "limit"))
                return table(departureColumns, departures.map(\.jsonValue))
            },
            RPCFunction("routes_by_type", parameters: [RPCParameter("route_type", .integer)], readOnly: true) { arguments, _ in
                let routes = try database.routes(ofType: RouteType(rawValue: try integer(arguments, "route_type")))
                return table(routeColumns, routes.map(\.jsonValue))
            },
            RPCFunction("trip_stops", parameters: [RPCParameter("trip_id", .text)], readOnly: true) { arguments, _ in
                table(tripStopColumns, try database.tripStops(tripID: try text(arguments, "trip_id")).map(\.jsonValue))
            },
        ]
    }
}

/// The four questions a transit bundle answers (`TransitSQLite`'s `TransitDatabase` is the implementation): what the
/// RPC functions call, so this module needs no storage engine.
package protocol TransitQuestions: Sendable {
    /// Stops whose folded name matches `query`, best match first.
    func searchStops(_ query: String, limit: Int) throws(CaravanError) -> [TransitStop]
    /// Departures from a stop at or after a local time, in departure order.
    func nextDepartures(fromStop stopID: String, at time: LocalDateTime, limit: Int) throws(CaravanError) -> [Departure]
    /// The routes of a type.
    func routes(ofType type: RouteType) throws(CaravanError) -> [TransitRoute]
    /// A trip's stops in sequence.
    func tripStops(tripID: String) throws(CaravanError) -> [TripStop]
}

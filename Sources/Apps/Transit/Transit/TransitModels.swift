package import CaravanCore

/// A GTFS `route_type`: the basic types (0–7, 11, 12) and the extended (Google "Extended GTFS Route Types",
/// 100–1799) ones. `basic` maps an extended type to the basic type it refines (`700` bus service → `3` bus).
package struct RouteType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }

    package static let tram = RouteType(rawValue: 0)
    package static let subway = RouteType(rawValue: 1)
    package static let rail = RouteType(rawValue: 2)
    package static let bus = RouteType(rawValue: 3)
    package static let ferry = RouteType(rawValue: 4)
    package static let cableTram = RouteType(rawValue: 5)
    package static let aerialLift = RouteType(rawValue: 6)
    package static let funicular = RouteType(rawValue: 7)
    package static let trolleybus = RouteType(rawValue: 11)
    package static let monorail = RouteType(rawValue: 12)

    /// Whether the value is a basic type or in the extended range.
    package var isKnown: Bool { isBasic || (100...1799).contains(rawValue) }

    /// Whether the value is one of the basic GTFS types.
    package var isBasic: Bool { (0...7).contains(rawValue) || rawValue == 11 || rawValue == 12 }

    /// The basic type this type is or refines; nil for extended types with no basic counterpart
    /// (air, taxi, self-drive, miscellaneous).
    package var basic: RouteType? {
        if isBasic { return self }
        switch rawValue {
        case 100...199, 300...399: return .rail          // railway, suburban railway
        case 200...299: return .bus                      // coach
        case 405: return .monorail
        case 400...599, 600...699: return .subway        // urban railway, metro, underground
        case 700...799: return .bus
        case 800...899: return .trolleybus
        case 900...999: return .tram
        case 1000...1099, 1200...1299: return .ferry     // water transport, ferry
        case 1300...1399: return .aerialLift
        case 1400...1499: return .funicular
        case 1701: return .cableTram
        default: return nil
        }
    }

    /// An English name (`bus`, `rail`, …; `extended 1501` when the type has no basic counterpart).
    package var description: String {
        switch basic?.rawValue {
        case 0: "tram"
        case 1: "subway"
        case 2: "rail"
        case 3: "bus"
        case 4: "ferry"
        case 5: "cable tram"
        case 6: "aerial lift"
        case 7: "funicular"
        case 11: "trolleybus"
        case 12: "monorail"
        default: "extended \(rawValue)"
        }
    }
}

/// A stop (or station) of the bundle.
package struct TransitStop: Sendable, Hashable {
    /// The GTFS `stop_id`.
    package let stopID: String
    package let code: String?
    package let name: String
    package let latitude: Double?
    package let longitude: Double?
    /// GTFS `location_type`: 0 stop, 1 station, 2 entrance, 3 node, 4 boarding area.
    package let locationType: Int
    /// The GTFS `stop_id` of the parent station, if any.
    package let parentStopID: String?

    /// `{"stop_id", "stop_code", "stop_name", "stop_lat", "stop_lon", "location_type", "parent_station"}`.
    package init(stopID: String, code: String?, name: String, latitude: Double?, longitude: Double?, locationType: Int, parentStopID: String?) {
        self.stopID = stopID
        self.code = code
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.locationType = locationType
        self.parentStopID = parentStopID
    }

    package var jsonValue: JSONValue {
        .object([
            ("stop_id", .string(stopID)), ("stop_code", code.map(JSONValue.string) ?? .null), ("stop_name", .string(name)),
            ("stop_lat", latitude.map(JSONValue.double) ?? .null), ("stop_lon", longitude.map(JSONValue.double) ?? .null),
            ("location_type", .integer(Int64(locationType))), ("parent_station", parentStopID.map(JSONValue.string) ?? .null),
        ])
    }
}

/// A route of the bundle.
package struct TransitRoute: Sendable, Hashable {
    /// The GTFS `route_id`.
    package let routeID: String
    /// The GTFS `agency_id`, if the feed names one.
    package let agencyID: String?
    package let shortName: String?
    package let longName: String?
    package let type: RouteType
    package let color: String?
    package let textColor: String?

    /// `{"route_id", "agency_id", "route_short_name", "route_long_name", "route_type", "route_color", "route_text_color"}`.
    package init(routeID: String, agencyID: String?, shortName: String?, longName: String?, type: RouteType, color: String?, textColor: String?) {
        self.routeID = routeID
        self.agencyID = agencyID
        self.shortName = shortName
        self.longName = longName
        self.type = type
        self.color = color
        self.textColor = textColor
    }

    package var jsonValue: JSONValue {
        .object([
            ("route_id", .string(routeID)), ("agency_id", agencyID.map(JSONValue.string) ?? .null),
            ("route_short_name", shortName.map(JSONValue.string) ?? .null), ("route_long_name", longName.map(JSONValue.string) ?? .null),
            ("route_type", .integer(Int64(type.rawValue))), ("route_color", color.map(JSONValue.string) ?? .null),
            ("route_text_color", textColor.map(JSONValue.string) ?? .null),
        ])
    }
}

/// One departure from a stop.
package struct Departure: Sendable, Hashable {
    /// The GTFS `trip_id`.
    package let tripID: String
    /// The GTFS `route_id`.
    package let routeID: String
    package let routeShortName: String?
    package let routeLongName: String?
    package let routeType: RouteType
    /// What the vehicle shows: the stop time's `stop_headsign`, else the trip's `trip_headsign`, else the name of
    /// the trip's last stop (feeds often leave both empty).
    package let headsign: String
    /// The departure time as GTFS writes it, relative to the trip's service day: `HH:MM:SS`, past `24:00:00` for a
    /// trip that started the day before.
    package let departureTime: String
    /// The service day the trip runs on (the day before the asked date for a trip past midnight).
    package let serviceDate: ServiceDate
    /// The local date and time of the departure: the service date plus the GTFS time (`24:05:00` on Monday's service
    /// departs Tuesday 00:05). Daylight-saving changes are ignored: GTFS times count from noon minus 12 h, which is
    /// midnight except on the two change days.
    package let departsAt: LocalDateTime
    package let stopSequence: Int
    /// True when the feed gives no time for this stop and the importer interpolated it between timed stops.
    package let interpolated: Bool

    /// `{"trip_id", "route_id", "route_short_name", "route_long_name", "route_type", "headsign", "departure_time",
    /// "service_date", "departs_at", "stop_sequence", "interpolated"}`.
    package init(tripID: String, routeID: String, routeShortName: String?, routeLongName: String?, routeType: RouteType, headsign: String, departureTime: String, serviceDate: ServiceDate, departsAt: LocalDateTime, stopSequence: Int, interpolated: Bool) {
        self.tripID = tripID
        self.routeID = routeID
        self.routeShortName = routeShortName
        self.routeLongName = routeLongName
        self.routeType = routeType
        self.headsign = headsign
        self.departureTime = departureTime
        self.serviceDate = serviceDate
        self.departsAt = departsAt
        self.stopSequence = stopSequence
        self.interpolated = interpolated
    }

    package var jsonValue: JSONValue {
        .object([
            ("trip_id", .string(tripID)), ("route_id", .string(routeID)),
            ("route_short_name", routeShortName.map(JSONValue.string) ?? .null),
            ("route_long_name", routeLongName.map(JSONValue.string) ?? .null),
            ("route_type", .integer(Int64(routeType.rawValue))), ("headsign", .string(headsign)),
            ("departure_time", .string(departureTime)), ("service_date", .string(serviceDate.description)),
            ("departs_at", .string(departsAt.description)), ("stop_sequence", .integer(Int64(stopSequence))),
            ("interpolated", .bool(interpolated)),
        ])
    }
}

/// One stop of a trip, in sequence.
package struct TripStop: Sendable, Hashable {
    package let stopSequence: Int
    /// The GTFS `stop_id`.
    package let stopID: String
    package let stopName: String
    /// `HH:MM:SS` (past `24:00:00` after midnight).
    package let arrivalTime: String
    package let departureTime: String
    /// True when the feed gives no time for this stop and the importer interpolated it.
    package let interpolated: Bool
    package let pickupType: Int
    package let dropOffType: Int

    /// `{"stop_sequence", "stop_id", "stop_name", "arrival_time", "departure_time", "interpolated", "pickup_type", "drop_off_type"}`.
    package init(stopSequence: Int, stopID: String, stopName: String, arrivalTime: String, departureTime: String, interpolated: Bool, pickupType: Int, dropOffType: Int) {
        self.stopSequence = stopSequence
        self.stopID = stopID
        self.stopName = stopName
        self.arrivalTime = arrivalTime
        self.departureTime = departureTime
        self.interpolated = interpolated
        self.pickupType = pickupType
        self.dropOffType = dropOffType
    }

    package var jsonValue: JSONValue {
        .object([
            ("stop_sequence", .integer(Int64(stopSequence))), ("stop_id", .string(stopID)), ("stop_name", .string(stopName)),
            ("arrival_time", .string(arrivalTime)), ("departure_time", .string(departureTime)), ("interpolated", .bool(interpolated)),
            ("pickup_type", .integer(Int64(pickupType))), ("drop_off_type", .integer(Int64(dropOffType))),
        ])
    }
}

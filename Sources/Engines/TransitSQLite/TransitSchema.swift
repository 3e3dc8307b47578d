/// The transit bundle's schema: one SQLite file, built once by `GTFSImporter`, opened read-only by
/// `TransitDatabase`.
///
/// - GTFS string ids live only in the dictionary tables (`dict_stop`, `dict_route`, `dict_trip`,
///   `dict_service`, `dict_shape`), keyed by the GTFS id, with a unique index on the integer for the way back.
///   Every other table refers to integers.
/// - Every table but `shape` is `WITHOUT ROWID`: the primary key is the storage order (stop times clustered by
///   trip and sequence, calendar exceptions by date). `shape` rows are large polylines, which SQLite stores better
///   in a rowid table.
/// - Times are seconds after midnight of the service day (≥ 86400 for trips past midnight); dates are `yyyymmdd`
///   integers. `stop_time.arrival` is NULL when it equals `departure` (most rows).
/// - A shape is one row: its points in sequence as an encoded polyline with precision 1e-6 ("polyline6", the
///   Google polyline algorithm with 6 decimals), a fifth of the size of one row per point. `shape_dist_traveled`
///   of shapes.txt is not kept (stop_times' distances are used, for interpolation, at import).
/// - `stop_time.flags` packs three small values: bit 0 `interpolated` (the feed left the time empty — a
///   non-timepoint stop — and the importer interpolated it between the surrounding timed stops, by
///   `shape_dist_traveled` when the feed has it for the segment, otherwise evenly by stop), bits 1–2 `pickup_type`,
///   bits 3–4 `drop_off_type`. `stop_time.boards` is 1 when a rider can board: not the trip's last stop and
///   `pickup_type` ≠ 1. The departures index holds only those rows.
/// - `stop_search` is a contentless FTS5 index of stop names (rowid = `sid`) with the `caravan_fold` tokenizer.
/// - `meta` holds the bundle format, the agency time zone and the feed's date range.
enum TransitSchema {
    /// `PRAGMA application_id` of a transit bundle ("CRVT").
    static let applicationID: Int32 = 0x4352_5654
    /// `PRAGMA user_version`: the bundle format. `TransitDatabase` refuses other versions.
    static let formatVersion = 1

    static let statements: [String] = [
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
        """
        CREATE TABLE agency(aid INTEGER PRIMARY KEY, agency_id TEXT, name TEXT NOT NULL, url TEXT, timezone TEXT NOT NULL,
                            lang TEXT, phone TEXT) WITHOUT ROWID
        """,
        "CREATE TABLE dict_stop(stop_id TEXT PRIMARY KEY, sid INTEGER NOT NULL) WITHOUT ROWID",
        "CREATE UNIQUE INDEX dict_stop_sid ON dict_stop(sid)",
        """
        CREATE TABLE stop(sid INTEGER PRIMARY KEY, code TEXT, name TEXT NOT NULL, lat REAL, lon REAL,
                          location_type INTEGER NOT NULL, parent_sid INTEGER, wheelchair_boarding INTEGER,
                          platform_code TEXT) WITHOUT ROWID
        """,
        "CREATE TABLE dict_route(route_id TEXT PRIMARY KEY, rid INTEGER NOT NULL) WITHOUT ROWID",
        "CREATE UNIQUE INDEX dict_route_rid ON dict_route(rid)",
        """
        CREATE TABLE route(rid INTEGER PRIMARY KEY, aid INTEGER, short_name TEXT, long_name TEXT, type INTEGER NOT NULL,
                           color TEXT, text_color TEXT) WITHOUT ROWID
        """,
        "CREATE INDEX route_type ON route(type)",
        "CREATE TABLE dict_service(service_id TEXT PRIMARY KEY, svc INTEGER NOT NULL) WITHOUT ROWID",
        "CREATE UNIQUE INDEX dict_service_svc ON dict_service(svc)",
        """
        CREATE TABLE calendar(svc INTEGER PRIMARY KEY, days INTEGER NOT NULL, start_date INTEGER NOT NULL,
                              end_date INTEGER NOT NULL) WITHOUT ROWID
        """,
        """
        CREATE TABLE calendar_date(date INTEGER NOT NULL, svc INTEGER NOT NULL, exception_type INTEGER NOT NULL,
                                   PRIMARY KEY(date, svc)) WITHOUT ROWID
        """,
        "CREATE TABLE headsign(hid INTEGER PRIMARY KEY, text TEXT NOT NULL) WITHOUT ROWID",
        "CREATE TABLE dict_shape(shape_id TEXT PRIMARY KEY, shape INTEGER NOT NULL) WITHOUT ROWID",
        "CREATE UNIQUE INDEX dict_shape_shape ON dict_shape(shape)",
        // A rowid table: its rows are large (overflow pages), which WITHOUT ROWID tables store poorly.
        "CREATE TABLE shape(shape INTEGER PRIMARY KEY, points INTEGER NOT NULL, polyline TEXT NOT NULL)",
        "CREATE TABLE dict_trip(trip_id TEXT PRIMARY KEY, tid INTEGER NOT NULL) WITHOUT ROWID",
        "CREATE UNIQUE INDEX dict_trip_tid ON dict_trip(tid)",
        """
        CREATE TABLE trip(tid INTEGER PRIMARY KEY, rid INTEGER NOT NULL, svc INTEGER NOT NULL, hid INTEGER,
                          short_name TEXT, direction_id INTEGER, shape INTEGER, last_sid INTEGER,
                          wheelchair_accessible INTEGER) WITHOUT ROWID
        """,
        """
        CREATE TABLE stop_time(tid INTEGER NOT NULL, seq INTEGER NOT NULL, sid INTEGER NOT NULL,
                               arrival INTEGER, departure INTEGER NOT NULL, boards INTEGER NOT NULL,
                               flags INTEGER NOT NULL, hid INTEGER, PRIMARY KEY(tid, seq)) WITHOUT ROWID
        """,
        "CREATE VIRTUAL TABLE stop_search USING fts5(name, content='', tokenize='caravan_fold')",
    ]

    /// Indexes built after the rows are in (faster than maintaining them row by row).
    static let lateIndexes: [String] = [
        "CREATE INDEX stop_time_departures ON stop_time(sid, departure) WHERE boards = 1",
    ]
}

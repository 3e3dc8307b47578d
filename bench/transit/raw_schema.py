#!/usr/bin/env python3
"""Build the "straightforward" SQLite schema of a GTFS feed: the raw GTFS tables as the CSV files have them
(string ids, text times, no dictionary tables, no FTS), loaded with Python's sqlite3 in one transaction, with the
obvious indexes. This is the baseline the Caravan transit bundle is compared with in BENCHMARKS.md.

usage: raw_schema.py FEED.zip OUT.sqlite      prints JSON: seconds, bytes, rows per table
"""
import csv, io, json, os, sqlite3, sys, time, zipfile

TABLES = {
    "agency": ["agency_id", "agency_name", "agency_url", "agency_timezone", "agency_lang", "agency_phone"],
    "stops": ["stop_id", "stop_code", "stop_name", "stop_lat", "stop_lon", "location_type", "parent_station"],
    "routes": ["route_id", "agency_id", "route_short_name", "route_long_name", "route_type", "route_color", "route_text_color"],
    "trips": ["route_id", "service_id", "trip_id", "trip_headsign", "trip_short_name", "direction_id", "shape_id"],
    "stop_times": ["trip_id", "arrival_time", "departure_time", "stop_id", "stop_sequence", "stop_headsign", "pickup_type",
                   "drop_off_type", "shape_dist_traveled"],
    "calendar": ["service_id", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "start_date", "end_date"],
    "calendar_dates": ["service_id", "date", "exception_type"],
    "shapes": ["shape_id", "shape_pt_lat", "shape_pt_lon", "shape_pt_sequence", "shape_dist_traveled"],
}
INTEGER = {"stop_sequence", "location_type", "route_type", "direction_id", "pickup_type", "drop_off_type", "exception_type",
           "shape_pt_sequence", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
REAL = {"stop_lat", "stop_lon", "shape_pt_lat", "shape_pt_lon", "shape_dist_traveled"}
KEYS = {"agency": None, "stops": "stop_id", "routes": "route_id", "trips": "trip_id", "calendar": "service_id"}
INDEXES = [
    "CREATE INDEX stop_times_trip ON stop_times(trip_id, stop_sequence)",
    "CREATE INDEX stop_times_stop ON stop_times(stop_id, departure_time)",
    "CREATE INDEX calendar_dates_date ON calendar_dates(date, service_id)",
    "CREATE INDEX shapes_shape ON shapes(shape_id, shape_pt_sequence)",
    "CREATE INDEX routes_type ON routes(route_type)",
]


def column_type(name):
    return "INTEGER" if name in INTEGER else "REAL" if name in REAL else "TEXT"


def build(feed, out):
    started = time.perf_counter()
    if os.path.exists(out):
        os.remove(out)
    db = sqlite3.connect(out)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    archive = zipfile.ZipFile(feed)
    names = {os.path.basename(n): n for n in archive.namelist() if not n.startswith("__MACOSX/")}
    rows = {}
    with db:
        for table, columns in TABLES.items():
            key = KEYS.get(table)
            defs = ", ".join(f"{c} {column_type(c)}" + (" PRIMARY KEY" if c == key else "") for c in columns)
            db.execute(f"CREATE TABLE {table} ({defs})")
            name = table + ".txt"
            if name not in names:
                rows[table] = 0
                continue
            text = archive.read(names[name]).decode("utf-8-sig")
            reader = csv.reader(io.StringIO(text))
            header = [h.strip() for h in next(reader)]
            positions = [header.index(c) if c in header else None for c in columns]

            def values(record):
                out = []
                for c, p in zip(columns, positions):
                    v = record[p].strip() if p is not None and p < len(record) else ""
                    out.append(None if v == "" else v)
                return out

            placeholders = ",".join("?" * len(columns))
            data = [values(r) for r in reader if r]
            db.executemany(f"INSERT OR IGNORE INTO {table} VALUES ({placeholders})", data)
            rows[table] = len(data)
        for statement in INDEXES:
            db.execute(statement)
        db.execute("ANALYZE")
    db.execute("VACUUM")
    db.close()
    return {"seconds": time.perf_counter() - started, "bytes": os.path.getsize(out), "rows": rows}


if __name__ == "__main__":
    print(json.dumps(build(sys.argv[1], sys.argv[2])))

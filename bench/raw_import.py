#!/usr/bin/env python3
"""Raw SQLite baseline for `caravan import places`: the same rows, the same field mapping, ONE transaction.

    python3 bench/raw_import.py --mode schema --schema bench/work/caravan-schema.sql --db OUT.sqlite places.json
    python3 bench/raw_import.py --mode bare --db OUT.sqlite places.json

--mode schema  creates the full Caravan schema (every table, index, CHECK and trigger, dumped from a database
               that `caravan migrate` created; see dump_schema.py) and inserts into "places".
--mode bare    creates a bare table with the same column names and no constraints, indexes or triggers.

Connection settings match Caravan's SQLiteStore: WAL, synchronous=FULL, foreign_keys=ON.
The database file must not exist (a fresh file, like a fresh Caravan data dir).
Prints one JSON line: {"rows", "parse_s", "schema_s", "insert_s", "total_s"} (total_s is in-process, from start
of main() to after COMMIT + close; the harness also measures the whole process wall time).
"""
import argparse
import json
import os
import sqlite3
import sys
import time

COLUMNS = [
    "id", "name_ar", "name_en", "category", "category_ar", "latitude", "longitude", "google_maps_url",
    "phone", "website", "hours", "address_ar", "tags", "data_sources",
]

BARE_TABLE = 'CREATE TABLE "places" (' + ", ".join(f'"{c}"' for c in COLUMNS) + ")"


def dumps(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def row_of(entry):
    """The mapping Caravan's PlaceRecordMapping applies to this data set (only these fields occur in it)."""
    hours = entry.get("hours")
    tags = entry.get("tags")
    sources = entry.get("sources", entry.get("data_sources"))
    return (
        entry["id"].strip(),
        entry["name_ar"].strip(),
        entry.get("name_en"),
        (entry.get("category_en") or "other").strip(),
        (entry.get("category") or entry.get("category_ar") or "").strip(),
        entry.get("lat", entry.get("latitude")),
        entry.get("lng", entry.get("longitude")),
        entry.get("google_maps_url"),
        entry.get("phone"),
        entry.get("website"),
        None if hours is None else dumps(hours),          # OSM hours string kept as a JSON string
        entry.get("address_ar") or entry.get("address") or entry.get("street"),
        None if tags is None else dumps(tags),            # JSON array text
        None if sources is None else dumps(sources),      # sources -> data_sources, JSON array text
    )


def main():
    t0 = time.perf_counter()
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["schema", "bare"], required=True)
    parser.add_argument("--schema", help="SQL file with the Caravan schema (mode schema)")
    parser.add_argument("--db", required=True)
    parser.add_argument("file")
    args = parser.parse_args()
    if os.path.exists(args.db):
        sys.exit(f"{args.db} exists; the baseline needs a fresh file")

    with open(args.file, "rb") as f:
        document = json.load(f)
    entries = document["places"] if isinstance(document, dict) else document
    rows = [row_of(e) for e in entries]
    t1 = time.perf_counter()

    db = sqlite3.connect(args.db, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.execute("PRAGMA foreign_keys = ON")
    if args.mode == "schema":
        with open(args.schema) as f:
            db.executescript("BEGIN;\n" + f.read() + "\nCOMMIT;")  # one transaction, like GRDB's migrator
    else:
        db.execute(BARE_TABLE)
    t2 = time.perf_counter()

    sql = 'INSERT INTO "places" (' + ", ".join(f'"{c}"' for c in COLUMNS) + ") VALUES (" + ", ".join("?" * len(COLUMNS)) + ")"
    db.execute("BEGIN")
    db.executemany(sql, rows)
    db.execute("COMMIT")
    db.close()
    t3 = time.perf_counter()
    print(json.dumps({"rows": len(rows), "parse_s": t1 - t0, "schema_s": t2 - t1, "insert_s": t3 - t2, "total_s": t3 - t0}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Raw SQLite baseline for `caravan import places`: the same rows, the same field mapping, ONE transaction.

    python3 bench/raw_import.py --mode schema --schema bench/work/caravan-schema.sql --db OUT.sqlite places.json
    python3 bench/raw_import.py --mode bare --db OUT.sqlite places.json

--mode schema  creates the full Caravan schema (every table, index, CHECK and trigger, dumped from a database
               that `caravan migrate` created; see dump_schema.py) and inserts into "places".
--mode bare    creates a bare table with the same column names and no constraints, indexes or triggers.

Connection settings match Caravan's SQLiteStore: WAL, synchronous=FULL, foreign_keys=ON.

Caravan's search index uses its own text folding: an FTS5 tokenizer (`caravan_fold`) and a SQL function of the same
name, both registered by Caravan on its connections. Python's sqlite3 cannot register an FTS5 tokenizer, so the
baseline indexes with SQLite's built-in `porter unicode61 remove_diacritics 2` (the same job: case folding,
diacritics, a stemmer) and registers `fold` below, a Python rendering of TextFolding's steps, as `caravan_fold` (and `regexp` as
`caravan_regexp`, which CHECK constraints call).
The work per row is of the same kind; the index contents may differ in edge cases (they are not compared).
The database file must not exist (a fresh file, like a fresh Caravan data dir).
Prints one JSON line: {"rows", "parse_s", "schema_s", "insert_s", "total_s"} (total_s is in-process, from start
of main() to after COMMIT + close; the harness also measures the whole process wall time).
"""
import argparse
import json
import os
import re
import sqlite3
import sys
import time
import unicodedata

COLUMNS = [
    "id", "name_ar", "name_en", "category", "category_ar", "latitude", "longitude", "google_maps_url",
    "phone", "website", "hours", "address_ar", "tags", "data_sources", "completeness_score",
]

# TextFolding (Sources/Core/CaravanCore/TextFolding.swift), step by step: NFKC, lowercase, Arabic marks and tatweel
# removed, letter forms unified, Arabic digits to ASCII, Latin diacritics removed.
ARABIC_MARKS = set(range(0x064B, 0x0660)) | {0x0670, 0x0640, 0x200E, 0x200F, 0x061C, 0x200C, 0x200D, 0xFEFF}
ARABIC_LETTERS = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ة": "ه", "ؤ": "و", "ئ": "ي",
                                **{chr(0x0660 + d): str(d) for d in range(10)}, **{chr(0x06F0 + d): str(d) for d in range(10)}})


def fold(text):
    if text is None:
        return None
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(c for c in text if ord(c) not in ARABIC_MARKS).translate(ARABIC_LETTERS)
    decomposed = unicodedata.normalize("NFD", text)
    text = "".join(c for c in decomposed if not 0x0300 <= ord(c) < 0x0370)  # Latin combining marks
    return unicodedata.normalize("NFC", text)


def regexp(pattern, text, case_insensitive):
    """Caravan's `caravan_regexp(pattern, text, flags)` (CHECK constraints with `~`): a search, as PostgreSQL's."""
    if pattern is None or text is None:
        return None
    return 1 if re.search(pattern, text, re.IGNORECASE if case_insensitive == 1 else 0) else 0


BARE_TABLE = 'CREATE TABLE "places" (' + ", ".join(f'"{c}"' for c in COLUMNS) + ")"


def dumps(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def row_of(entry):
    """The mapping Caravan's PlaceRecordMapping applies to this data set (only these fields occur in it)."""
    hours = entry.get("hours")
    tags = entry.get("tags")
    sources = entry.get("sources", entry.get("data_sources"))
    row = (
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
    return row + (completeness_score(row, tags),)


def completeness_score(row, tags):
    """PlacesBehaviours.completenessScore (derived by Caravan's write pipeline): a tenth for each of name_ar, name_en,
    description_ar, a positive rating, latitude, price_range, google_maps_url, cover_image_url, a tag, neighborhood.
    Of those, this data set carries name_ar, name_en, latitude, google_maps_url and tags (the rating defaults to 0)."""
    name_ar, name_en, latitude, maps_url = row[1], row[2], row[5], row[7]
    present = sum(value is not None for value in (name_ar, name_en, latitude, maps_url))
    return (present + (1 if tags else 0)) / 10


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
        db.create_function("caravan_fold", 1, fold, deterministic=True)
        db.create_function("caravan_regexp", 3, regexp, deterministic=True)
        with open(args.schema) as f:
            schema = f.read().replace("tokenize = 'caravan_fold stem'", "tokenize = 'porter unicode61 remove_diacritics 2'")
        db.executescript("BEGIN;\n" + schema + "\nCOMMIT;")  # one transaction, like GRDB's migrator
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

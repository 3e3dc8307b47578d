#!/usr/bin/env python3
"""Raw SQLite baseline for `caravan import world`: the same rows into the same tables, ONE transaction.

    python3 bench/world_raw_import.py --db OUT.sqlite countries.csv world_cities15000.csv

The schema is TravelLog's frozen migration (Sources/Apps/TravelLog/TravelLog/Migrations/sqlite/travel-0001-create.sql: every
CHECK, key and index), and each row carries what Caravan stores: the folded search columns and the city token rows
(folded here with casefold + NFKD without combining marks: the same amount of work, not Caravan's exact folding).
Connection settings match Caravan's SQLiteStore: WAL, synchronous=FULL, foreign_keys=ON. The file must not exist.
Prints one JSON line: {"countries", "cities", "tokens", "total_s"}.
"""
import argparse
import csv
import json
import os
import re
import sqlite3
import sys
import time
import unicodedata

MIGRATION = os.path.join(os.path.dirname(__file__), "..", "Sources", "Apps", "TravelLog", "Migrations", "sqlite", "travel-0001-create.sql")
TOKEN = re.compile(r"\w+")


def fold(text):
    if not text:
        return ""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokens(names):
    seen = []
    for name in names:
        for token in TOKEN.findall(fold(name)):
            if token not in seen:
                seen.append(token)
    return seen


def blank_none(value):
    value = (value or "").strip()
    return value or None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("countries")
    parser.add_argument("cities")
    args = parser.parse_args()
    if os.path.exists(args.db):
        sys.exit(f"{args.db} exists: give a fresh file")
    start = time.perf_counter()
    db = sqlite3.connect(args.db, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("PRAGMA foreign_keys=ON")
    db.executescript(open(MIGRATION, encoding="utf-8").read())
    db.execute("BEGIN")
    country_ids = {}
    with open(args.countries, encoding="utf-8", newline="") as source:
        countries = list(csv.DictReader(source))
    for row in countries:
        country_ids[row["iso2"]] = int(row["geonameid"])
        db.execute(
            'INSERT INTO "countries" ("id","name","name_ar","country_code","capital","continent","population",'
            '"search_name","search_ar","search_code","search_tokens") VALUES (?,?,?,?,?,?,?,?,?,?,?)',
            (int(row["geonameid"]), row["name"], blank_none(row["name_ar"]), row["iso2"], blank_none(row["capital"]),
             blank_none(row["continent"]), int(row["population"] or 0), fold(row["name"]), fold(row["name_ar"]),
             fold(row["iso2"]), "".join(" " + t for t in tokens([row["name"], row["name_ar"], row["iso2"]]))))
    city_count = token_count = 0
    with open(args.cities, encoding="utf-8", newline="") as source:
        for row in csv.DictReader(source):
            name = row["name"].strip()
            plain = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
            city_id = int(row["geonameid"])
            db.execute(
                'INSERT INTO "cities" ("id","display_name","plain_name","name_ar","admin","country","country_id","population",'
                '"latitude","longitude","search_display","search_plain","search_ar") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)',
                (city_id, name, plain, blank_none(row["name_ar"]), blank_none(row["admin1_name"]), blank_none(row["country_name"]),
                 country_ids[row["country_code"]], int(row["population"] or 0), float(row["latitude"]), float(row["longitude"]),
                 fold(name), fold(plain), fold(row["name_ar"])))
            city_tokens = tokens([name, plain, row["name_ar"]])
            db.executemany('INSERT INTO "city_name_tokens" ("city_id","token") VALUES (?,?)', [(city_id, t) for t in city_tokens])
            city_count += 1
            token_count += len(city_tokens)
    db.execute("COMMIT")
    db.close()
    print(json.dumps({"countries": len(countries), "cities": city_count, "tokens": token_count,
                      "total_s": round(time.perf_counter() - start, 3)}))


if __name__ == "__main__":
    main()

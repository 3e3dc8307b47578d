#!/usr/bin/env python3
"""Import benchmark: `caravan import places` into a fresh data dir vs a raw Python sqlite3 bulk insert.

    python3 bench/import_bench.py [--runs 5]

Every variant is timed as a whole process (wall clock, fresh database each run), and the runs are interleaved
(caravan, raw-schema, raw-bare, ...) so drift hits all variants alike. Medians are reported.

  caravan            caravan import places places.json --data-dir <fresh dir> --json
                     (process start + migrations on the empty dir + JSON parse + 11 batches of 500 upserts)
  raw-schema         python3 bench/raw_import.py --mode schema --schema bench/work/caravan-schema.sql --db <fresh>
                     (interpreter start + JSON parse + the same schema, created in one transaction + INSERTs in ONE
                     transaction; the schema is dumped from a `caravan migrate`d database)
  raw-bare           python3 bench/raw_import.py --mode bare --db <fresh> (bare table, no constraints/indexes/triggers)
Decomposition (not part of the goal):
  caravan-one-batch  the caravan command with --batch-size 6000 (all rows in one transaction, like the raw script)
  caravan-migrate    caravan migrate --data-dir <fresh dir>  (process start + migrations only)
  caravan-dry-run    caravan import places --dry-run into a migrated dir (parse + map + validate, no writes)

After the runs it checks that the caravan and raw-schema databases hold the same places rows.
Writes bench/work/results/import.json and prints a summary.
"""
import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
WORK = os.path.join(BENCH, "work")
RESULTS = os.path.join(WORK, "results")
CARAVAN = os.environ.get("CARAVAN", os.path.join(ROOT, ".build-release", "release", "caravan"))
PLACES = os.environ.get("PLACES", "/work/shared/data/riyadh/places.json")
PY = sys.executable


def fresh(path):
    for p in (path, path + "-wal", path + "-shm"):
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.remove(p)


def timed(argv):
    subprocess.run(["sync"], check=True)
    start = time.perf_counter()
    out = subprocess.run(argv, check=True, capture_output=True, text=True)
    return time.perf_counter() - start, out.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    os.makedirs(RESULTS, exist_ok=True)

    # The schema Caravan creates, for the raw baseline.
    schema_dir = os.path.join(WORK, "schema-src")
    fresh(schema_dir)
    subprocess.run([CARAVAN, "migrate", "--data-dir", schema_dir], check=True, capture_output=True)
    schema_file = os.path.join(WORK, "caravan-schema.sql")
    with open(schema_file, "w") as f:
        subprocess.run([PY, os.path.join(BENCH, "dump_schema.py"), os.path.join(schema_dir, "caravan.sqlite")], check=True, stdout=f)

    caravan_dir = os.path.join(WORK, "import-caravan")
    raw_schema_db = os.path.join(WORK, "import-raw-schema.sqlite")
    raw_bare_db = os.path.join(WORK, "import-raw-bare.sqlite")
    migrate_dir = os.path.join(WORK, "import-migrate")
    one_batch_dir = os.path.join(WORK, "import-one-batch")
    commands = {
        # A fresh deployment each run, migrated and imported, as an import into a new directory did before only
        # `migrate` and `serve` created deployments.
        "caravan": ["sh", "-c", f'"{CARAVAN}" migrate --data-dir "{caravan_dir}" > /dev/null && exec "{CARAVAN}" import places "{PLACES}" --data-dir "{caravan_dir}" --json'],
        "raw-schema": [PY, os.path.join(BENCH, "raw_import.py"), "--mode", "schema", "--schema", schema_file, "--db", raw_schema_db, PLACES],
        "raw-bare": [PY, os.path.join(BENCH, "raw_import.py"), "--mode", "bare", "--db", raw_bare_db, PLACES],
        "caravan-one-batch": ["sh", "-c", f'"{CARAVAN}" migrate --data-dir "{one_batch_dir}" > /dev/null && exec "{CARAVAN}" import places "{PLACES}" --data-dir "{one_batch_dir}" --batch-size 6000 --json'],
        "caravan-migrate": [CARAVAN, "migrate", "--data-dir", migrate_dir],
        "caravan-dry-run": [CARAVAN, "import", "places", PLACES, "--data-dir", schema_dir, "--dry-run", "--json"],
    }
    targets = {"caravan": caravan_dir, "raw-schema": raw_schema_db, "raw-bare": raw_bare_db, "caravan-migrate": migrate_dir, "caravan-one-batch": one_batch_dir}
    times = {name: [] for name in commands}
    inner = {"raw-schema": [], "raw-bare": []}

    # One untimed run of each to warm the page cache (binary, python, places.json).
    for name, argv in commands.items():
        if name in targets:
            fresh(targets[name])
        subprocess.run(argv, check=True, capture_output=True)

    for run in range(args.runs):
        for name, argv in commands.items():
            if name in targets:
                fresh(targets[name])
            elapsed, stdout = timed(argv)
            times[name].append(elapsed)
            if name == "caravan":
                summary = json.loads(stdout)
                assert summary["inserted"] == 5487 and summary["rejected"] == 0, summary
            if name in inner:
                inner[name].append(json.loads(stdout))
        print(f"run {run + 1}: " + "  ".join(f"{n} {times[n][-1]:.3f}s" for n in commands), flush=True)

    # Same rows? Compare every mapped column of places (timestamps differ by construction).
    columns = ["id", "name_ar", "name_en", "category", "category_ar", "latitude", "longitude", "google_maps_url",
               "phone", "website", "hours", "address_ar", "tags", "data_sources", "google_rating",
               "is_trending", "is_new", "is_free", "is_active", "completeness_score"]
    q = "SELECT " + ", ".join(f'"{c}"' for c in columns) + ' FROM places ORDER BY id'
    a = sqlite3.connect(os.path.join(caravan_dir, "caravan.sqlite")).execute(q).fetchall()
    b = sqlite3.connect(raw_schema_db).execute(q).fetchall()
    diffs = [(x, y) for x, y in zip(a, b) if x != y]
    same = len(a) == len(b) == 5487 and not diffs
    if diffs:
        print("first differing row:\n  caravan:", diffs[0][0], "\n  raw:    ", diffs[0][1])

    med = {n: statistics.median(t) for n, t in times.items()}
    report = {
        "runs": args.runs,
        "commands": {n: " ".join(argv) for n, argv in commands.items()},
        "times_s": times,
        "median_s": med,
        "raw_inner_median_s": {n: {k: statistics.median(r[k] for r in rows) for k in ("parse_s", "schema_s", "insert_s", "total_s")} for n, rows in inner.items()},
        "ratio_caravan_over_raw_schema": med["caravan"] / med["raw-schema"],
        "ratio_caravan_over_raw_bare": med["caravan"] / med["raw-bare"],
        "rows_identical_caravan_vs_raw_schema": same,
    }
    with open(os.path.join(RESULTS, "import.json"), "w") as f:
        json.dump(report, f, indent=2)
    print(json.dumps({k: report[k] for k in ("median_s", "raw_inner_median_s", "ratio_caravan_over_raw_schema", "ratio_caravan_over_raw_bare", "rows_identical_caravan_vs_raw_schema")}, indent=2))


if __name__ == "__main__":
    main()

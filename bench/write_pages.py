#!/usr/bin/env python3
"""Diagnostic for the write benchmark: how many WAL pages one favorites insert writes, and what part the change log is.

    python3 bench/write_pages.py DATA_DIR [--commits 2000]

Works on a COPY of DATA_DIR/caravan.sqlite (a data dir left by `bench/write_bench.sh caravan`, ~200k favorites).
Replays the statements Caravan's write pipeline runs for one POST /rest/v1/favorites, one transaction per row, with
WAL auto-checkpoints off so the WAL grows by exactly the frames the commits write, in three variants:

  full        INSERT favorites … RETURNING id; the policy re-check SELECT count(*); SELECT the stored row;
              INSERT INTO caravan_changes … RETURNING seq (the change log)
  no-log      the same without the change-log INSERT
  pb-like     a table shaped like PocketBase's favorites (text id PRIMARY KEY, user, place, UNIQUE (user, place)),
              pre-filled with the same number of rows, one INSERT per transaction

Reports WAL frames (pages) per commit, and the time per commit (best of two interleaved passes) with synchronous=NORMAL and =FULL (Python sqlite3,
same system libsqlite3 as Caravan, default 2 MB page cache like Caravan's connections). Not a server benchmark.
"""
import argparse
import json
import os
import random
import shutil
import sqlite3
import time
import uuid

NOW = "strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'"


def wal_frames(path, page_size):
    wal = path + "-wal"
    size = os.path.getsize(wal) if os.path.exists(wal) else 0
    return max(0, (size - 32) // (page_size + 24))


def run(db_path, variant, commits, synchronous, users, places):
    con = sqlite3.connect(db_path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute(f"PRAGMA synchronous = {synchronous}")
    con.execute("PRAGMA foreign_keys = ON")
    con.execute("PRAGMA wal_autocheckpoint = 0")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = con.execute("PRAGMA page_size").fetchone()[0]
    before = wal_frames(db_path, page_size)
    start = time.perf_counter()
    for n in range(commits):
        user, place = users[n % len(users)], places[(n * 7919) % len(places)]
        con.execute("BEGIN IMMEDIATE")
        if variant == "pb-like":
            con.execute("INSERT INTO pb_favorites (id, user, place) VALUES (?, ?, ?)",
                        ("r" + os.urandom(7).hex(), user, place + "#" + str(n)))
        else:
            fid = con.execute('INSERT INTO "favorites" ("user_id", "place_id") VALUES (?, ?) RETURNING "id"',
                              (user, place)).fetchone()[0]
            con.execute('SELECT count(*) FROM "favorites" WHERE "id" IN (?) AND NOT COALESCE(("user_id" = ?), 0)', (fid, user))
            row = con.execute('SELECT "id", "user_id", "place_id", "note", "created_at" FROM "favorites" WHERE "id" IN (?) ORDER BY "id"', (fid,)).fetchone()
            if variant == "full":
                record = json.dumps(dict(zip(["id", "user_id", "place_id", "note", "created_at"], row)), separators=(",", ":"))
                con.execute(f'INSERT INTO "caravan_changes" ("table_name", "primary_key", "op", "record", "old_record", "committed_at", "actor") '
                            f'VALUES (?, ?, ?, ?, ?, {NOW}, ?) RETURNING "seq", "committed_at"',
                            ("favorites", json.dumps({"id": fid}), "insert", record, None, user)).fetchone()
        con.execute("COMMIT")
    elapsed = time.perf_counter() - start
    frames = wal_frames(db_path, page_size) - before
    con.close()
    return frames / commits, elapsed / commits * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data_dir")
    parser.add_argument("--commits", type=int, default=2000)
    args = parser.parse_args()
    source = os.path.join(args.data_dir, "caravan.sqlite")
    work = os.path.join(os.path.dirname(os.path.abspath(__file__)), "work", "write-pages")
    os.makedirs(work, exist_ok=True)
    src = sqlite3.connect(source)
    src.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    existing = src.execute("SELECT count(*) FROM favorites").fetchone()[0]
    places = [r[0] for r in src.execute("SELECT id FROM places")]
    src.close()

    results = {"existing_favorites": existing}
    best = {}
    for synchronous in ("NORMAL", "FULL"):
        for variant in ("full", "no-log", "pb-like") * 2:   # twice, interleaved; the faster time is kept
            db = os.path.join(work, "copy.sqlite")
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(db + suffix):
                    os.remove(db + suffix)
            shutil.copyfile(source, db)
            con = sqlite3.connect(db, isolation_level=None)
            # Fresh accounts (the copy's pairs must not collide; favorites reference auth_users) and, for pb-like,
            # a pre-filled PocketBase-shaped table.
            users = [str(uuid.uuid4()) for _ in range(100)]
            con.execute("BEGIN")
            con.executemany("INSERT INTO auth_users (id) VALUES (?)", [(u,) for u in users])
            if variant == "pb-like":
                con.execute("CREATE TABLE pb_favorites (id TEXT PRIMARY KEY DEFAULT ('r'||lower(hex(randomblob(7)))) NOT NULL, "
                            "place TEXT DEFAULT '' NOT NULL, user TEXT DEFAULT '' NOT NULL)")
                con.execute("CREATE UNIQUE INDEX idx_pb_favorites_user_place ON pb_favorites (user, place)")
                rnd = random.Random(1)
                con.executemany("INSERT INTO pb_favorites (id, user, place) VALUES (?, ?, ?)",
                                [("r" + rnd.randbytes(7).hex(), "u%013d" % rnd.randrange(100), places[i % len(places)] + "/" + str(i))
                                 for i in range(existing)])
            con.execute("COMMIT")
            con.close()
            frames, micros = run(db, variant, args.commits, synchronous, users, places)
            key = f"{variant} synchronous={synchronous}"
            if key in best:
                micros = min(micros, best[key])
                results[key] = {"wal_pages_per_commit": round(frames, 1), "us_per_commit": round(micros)}
                print(f"{variant:8s} synchronous={synchronous:6s}  {frames:5.1f} WAL pages/commit  {micros:6.0f} µs/commit", flush=True)
            best[key] = micros
    with open(os.path.join(work, "..", "results", "write-pages.json"), "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()

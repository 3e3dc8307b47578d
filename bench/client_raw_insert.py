"""The floor of the client's initial sync: the rows a LocalStore pulled, inserted into the same local schema with
Python's sqlite3 in one transaction. Prints the seconds the insert took.

    python bench/client_raw_insert.py CLIENT_STORE.sqlite OUT.sqlite"""
import sqlite3
import sys
import time
from pathlib import Path

source, target = sys.argv[1], sys.argv[2]
Path(target).unlink(missing_ok=True)
src = sqlite3.connect(source)
schema = src.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'places'").fetchone()[0]
rows = src.execute("SELECT * FROM places").fetchall()
marks = ",".join("?" * len(rows[0]))
dst = sqlite3.connect(target)
dst.execute("PRAGMA journal_mode = WAL")
dst.execute("PRAGMA synchronous = FULL")
dst.execute(schema)
start = time.perf_counter()
with dst:
    dst.executemany(f"INSERT INTO places VALUES ({marks})", rows)
print(f"{time.perf_counter() - start:.3f}")

#!/usr/bin/env python3
"""Print the schema of a Caravan database (after `caravan migrate --data-dir DIR`) as replayable SQL.

    python3 bench/dump_schema.py DIR/caravan.sqlite > bench/work/caravan-schema.sql

Every table, index and trigger in creation order, except SQLite's internal objects and GRDB's bookkeeping table.
Equivalent to `sqlite3 DIR/caravan.sqlite .schema` minus grdb_migrations.
"""
import sqlite3
import sys

db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for (sql,) in db.execute(
    "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
    "AND tbl_name <> 'grdb_migrations' ORDER BY rowid"
):
    print(sql.rstrip(";") + ";")

#!/usr/bin/env python3
"""Print the schema of a Caravan database (after `caravan migrate --data-dir DIR`) as replayable SQL.

    python3 bench/dump_schema.py DIR/caravan.sqlite > bench/work/caravan-schema.sql

Every table, index and trigger in creation order, except SQLite's internal objects, the shadow tables of virtual
tables and GRDB's bookkeeping table.
Equivalent to `sqlite3 DIR/caravan.sqlite .schema` minus grdb_migrations.
"""
import sqlite3
import sys

db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
# A virtual table (FTS5, R*Tree) creates its own shadow tables (`NAME_data`, `NAME_node`, ...): they are not replayed.
virtual = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'")]
for (name, sql) in db.execute(
    "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
    "AND tbl_name <> 'grdb_migrations' ORDER BY rowid"
):
    if any(name.startswith(v + "_") and sql.startswith("CREATE TABLE") for v in virtual):
        continue
    print(sql.rstrip(";") + ";")

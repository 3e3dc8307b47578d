#!/usr/bin/env bash
# Sync benchmarks: 100k generated places; the initial anon pull beside the same rows read into JSON with
# raw SQLite (`sqlite3 -json`) or PostgreSQL (`COPY (SELECT row_to_json …) TO STDOUT`); delta pulls of 1,000 changes;
# a push of 1,000 mutations in batches of 100 beside 1,000 REST POSTs.
#
#   bench/sync_bench.sh sqlite|postgres|all
#
# Summaries: bench/work/results/sync.txt. Release binary: swift build -c release --scratch-path .build-release.
source "$(dirname "$0")/common.sh"

PLACES_N="${PLACES_N:-100000}"
LOG="$RESULTS/sync.txt"
PGBIN=/usr/lib/postgresql/15/bin
PGSTATE="$WORK/pg-sync"
VENV_PYTHON="${VENV_PYTHON:-$ROOT/.venv/bin/python}"
log() { echo "$*" | tee -a "$LOG"; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
median3() { sort -n | sed -n 2p; }
time_s() { local s e; s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f\n", e - s }'; }

run_server_bench() {   # run_server_bench NAME DATA_ARGS...
    local name="$1"; shift
    local port; port="$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    local keys; keys="$("$CARAVAN" keys --json "$@")"
    local anon service
    anon="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"
    service="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["service_role_key"])')"
    CARAVAN_AUTH_RATE_LIMIT_SIGN_UP=100000 "$CARAVAN" serve "$@" --port "$port" --log-level warning > "$WORK/sync-$name-serve.log" 2>&1 &
    local pid=$!
    wait_port "$port"
    log "== $name: $("$VENV_PYTHON" "$BENCH_DIR/sync_bench.py" "http://127.0.0.1:$port" "$anon" "$service")"
    stop_pid "$pid"
}

bench_sqlite() {
    local dir="$WORK/sync-sqlite"
    rm -rf "$dir"
    log "== sqlite: generate $PLACES_N places: $(time_s "$CARAVAN" bench generate-places "$PLACES_N" --seed 1 --data-dir "$dir") s"
    local rows; rows="$(sqlite3 "$dir/caravan.sqlite" 'SELECT count(*) FROM places WHERE is_active = 1')"
    local runs; runs="$(for _ in 1 2 3; do time_s sqlite3 -json "$dir/caravan.sqlite" 'SELECT * FROM places WHERE is_active = 1 ORDER BY id'; done | median3)"
    log "== raw sqlite3 -json of the $rows visible rows: median ${runs} s ($(awk -v r="$rows" -v s="$runs" 'BEGIN { printf "%d", r / s }') rows/s)"
    run_server_bench sqlite --data-dir "$dir"
}

bench_postgres() {
    rm -rf "$PGSTATE"; mkdir -p "$PGSTATE/data" "$PGSTATE/sockets"
    [ "$(id -u)" = 0 ] && chown -R postgres:postgres "$PGSTATE"
    as_pg "$PGBIN/initdb" -D "$PGSTATE/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 > "$PGSTATE/initdb.log"
    local pgport; pgport="$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    as_pg "$PGBIN/pg_ctl" -D "$PGSTATE/data" -l "$PGSTATE/server.log" -w start -o "-p $pgport -k $PGSTATE/sockets -c listen_addresses=127.0.0.1" > /dev/null
    trap 'as_pg "$PGBIN/pg_ctl" -D "$PGSTATE/data" -m fast -w stop > /dev/null 2>&1 || true' EXIT
    psql -h 127.0.0.1 -p "$pgport" -U postgres -qc "CREATE DATABASE caravan_sync" postgres
    local url="postgres://postgres@127.0.0.1:$pgport/caravan_sync?sslmode=disable"
    # The places are generated into SQLite and moved with caravan copy (the pipeline on PostgreSQL is slower to load them).
    local dir="$WORK/sync-pg-source"
    rm -rf "$dir"
    "$CARAVAN" bench generate-places "$PLACES_N" --seed 1 --data-dir "$dir" > /dev/null
    log "== postgres: caravan copy of $PLACES_N places: $(time_s "$CARAVAN" copy --from "$dir" --to "$url") s"
    local q='COPY (SELECT row_to_json(p) FROM places p WHERE is_active ORDER BY id) TO STDOUT'
    local rows; rows="$(psql -h 127.0.0.1 -p "$pgport" -U postgres -qtAc 'SELECT count(*) FROM places WHERE is_active' caravan_sync)"
    local runs; runs="$(for _ in 1 2 3; do time_s psql -h 127.0.0.1 -p "$pgport" -U postgres -qc "$q" caravan_sync; done | median3)"
    log "== psql COPY row_to_json of the $rows visible rows: median ${runs} s ($(awk -v r="$rows" -v s="$runs" 'BEGIN { printf "%d", r / s }') rows/s)"
    run_server_bench postgres --data-dir "$WORK/sync-pg-serve" --database "$url"
}

log "# $(date -u +%FT%TZ) $(nproc) cores, $(uname -r); $CARAVAN"
case "${1:-all}" in
    sqlite) bench_sqlite ;;
    postgres) bench_postgres ;;
    all) bench_sqlite; bench_postgres ;;
    *) echo "usage: $0 sqlite|postgres|all" >&2; exit 2 ;;
esac

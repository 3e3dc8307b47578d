#!/usr/bin/env bash
# The REST read and write workloads on the PostgreSQL engine, beside the SQLite engine and beside the
# same SQL run directly with pgbench (the floor); then two instances on one database.
#
#   bench/postgres_bench.sh all        # read, write, two-instances
#   bench/postgres_bench.sh read|write|two|write-curve|notify|read-budget
#
# read-budget: where a read's CPU goes on this machine. The read's floors in PostgreSQL's own protocols (pgbench
# simple and prepared), the database work a PostgREST server asks for the same request (its transaction: set_config
# of the request's settings, the page built as JSON by json_agg), then Caravan's CPU per request (/proc of the
# server) and PostgreSQL's (/proc of every process of this cluster) for /health, a read that finds no row and the 20-row read.
#
# Postgres runs as a dedicated cluster with default durability (fsync on, synchronous_commit on) under
# bench/work/pg, on a free loopback port, started and removed by this script. Each wrk measurement: 5 s warm-up,
# then two 20 s runs, -t2 -c32; pgbench: -c32 -j2 -T20 after a 5 s warm-up. Summaries: bench/work/results/postgres.txt.
source "$(dirname "$0")/common.sh"

CARAVAN_PORT="${CARAVAN_PORT:-18080}"
LOG="$RESULTS/postgres.txt"
PGBIN=/usr/lib/postgresql/15/bin
PGSTATE="$WORK/pg"
READ_PATH='/rest/v1/places?category=eq.cafe&order=google_rating.desc.nullslast&limit=20'
WRITE_USERS="${WRITE_USERS:-100}"
VENV_PYTHON="${VENV_PYTHON:-$ROOT/.venv/bin/python}"

log() { echo "$*" | tee -a "$LOG"; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

pg_start() {
    rm -rf "$PGSTATE"; mkdir -p "$PGSTATE/data" "$PGSTATE/sockets"
    [ "$(id -u)" = 0 ] && chown -R postgres:postgres "$PGSTATE"
    as_pg "$PGBIN/initdb" -D "$PGSTATE/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 > "$PGSTATE/initdb.log"
    PGPORT="$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    as_pg "$PGBIN/pg_ctl" -D "$PGSTATE/data" -l "$PGSTATE/server.log" -w start \
        -o "-p $PGPORT -k $PGSTATE/sockets -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=256MB" > /dev/null
    DATABASE_URL="postgres://postgres@127.0.0.1:$PGPORT/caravan_bench?sslmode=disable"
    psql -h 127.0.0.1 -p "$PGPORT" -U postgres -qc "CREATE DATABASE caravan_bench" postgres
}
pg_stop() { [ -d "$PGSTATE/data" ] && as_pg "$PGBIN/pg_ctl" -D "$PGSTATE/data" -m fast -w stop > /dev/null 2>&1 || true; }
psql_bench() { psql -h 127.0.0.1 -p "$PGPORT" -U postgres -qtA caravan_bench "$@"; }

# serve_pg PORT: a `caravan serve --database` on PORT; echoes its pid.
serve_pg() {
    "$CARAVAN" serve --database "$DATABASE_URL" --data-dir "$WORK/pg-serve-$1" --port "$1" --log-level warning > "$WORK/pg-serve-$1.log" 2>&1 &
    echo $!
}

run_wrk() {   # run_wrk NAME URL [wrk args…]
    local name="$1" url="$2"; shift 2
    log "== $name: $url"
    wait_quiet
    wrk -t2 -c32 -d"$WRK_WARMUP" "$@" "$url" > "$RESULTS/$name-warmup.txt"
    for run in 1 2; do
        wait_quiet
        wrk -t2 -c32 -d"$WRK_DURATION" --latency "$@" "$url" > "$RESULTS/$name-run$run.txt"
        log "   run $run: $(wrk_summary "$RESULTS/$name-run$run.txt")  (mean $(awk '/Latency/ {print $2; exit}' "$RESULTS/$name-run$run.txt"))"
    done
}

run_pgbench() {   # run_pgbench NAME SCRIPT [pgbench args…]
    local name="$1" script="$2"; shift 2
    log "== pgbench $name (-c32 -j2 $*): $(tr '\n' ' ' < "$script" | cut -c1-200)"
    wait_quiet
    as_pg "$PGBIN/pgbench" -n -h 127.0.0.1 -p "$PGPORT" -U postgres -c32 -j2 -T5 "$@" -f "$script" caravan_bench > /dev/null 2>&1
    for run in 1 2; do
        wait_quiet
        as_pg "$PGBIN/pgbench" -n -h 127.0.0.1 -p "$PGPORT" -U postgres -c32 -j2 -T"$WRK_DURATION_S" "$@" -f "$script" caravan_bench > "$RESULTS/pgbench-$name-run$run.txt" 2>&1
        log "   run $run: $(awk '/^tps/ {printf "%s tps  ", $3} /latency average/ {printf "latency avg %s ms", $4}' "$RESULTS/pgbench-$name-run$run.txt")"
    done
}

prepare() {
    pg_start
    trap '[ -n "${PID1:-}" ] && stop_pid "$PID1" 2>/dev/null; [ -n "${PID2:-}" ] && stop_pid "$PID2" 2>/dev/null; pg_stop' EXIT
    # import needs a deployment in the database: migrate creates it
    "$CARAVAN" migrate --database "$DATABASE_URL" --data-dir "$WORK/pg-migrate" > "$WORK/pg-migrate.log"
    "$CARAVAN" import places "$PLACES" --database "$DATABASE_URL" --json > "$WORK/pg-import.json"
    ANON_KEY="$("$CARAVAN" keys --database "$DATABASE_URL" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"
    SERVICE_KEY="$("$CARAVAN" keys --database "$DATABASE_URL" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["service_role_key"])')"
    export ANON_KEY
    log "# postgres_bench $(date -u +%FT%TZ) $(git -C "$ROOT" rev-parse --short HEAD); import: $(cat "$WORK/pg-import.json" | "$PYTHON" -c 'import json,sys; s=json.load(sys.stdin); print({k: s[k] for k in ("total","inserted","rejected")})')"
}

run_read() {
    PID1="$(serve_pg "$CARAVAN_PORT")"; wait_port "$CARAVAN_PORT"; sleep 1
    run_wrk pg-read "http://127.0.0.1:$CARAVAN_PORT$READ_PATH" -H "apikey: $ANON_KEY"
    stop_pid "$PID1"
    # The statement Caravan sends for that request (anon: the policy adds is_active), run by pgbench.
    cat > "$WORK/pg-read.sql" <<'SQL'
SELECT * FROM places WHERE category = 'cafe' AND is_active = TRUE ORDER BY google_rating DESC NULLS LAST LIMIT 20;
SQL
    run_pgbench read "$WORK/pg-read.sql"
}

# cpu_ticks PID…: the user + system clock ticks (1/100 s) the processes have used so far.
cpu_ticks() { local total=0 pid; for pid in "$@"; do total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0))); done; echo "$total"; }

run_read_budget() {
    run_pgbench read-simple "$WORK/pg-read.sql"
    run_pgbench read-prepared "$WORK/pg-read.sql" -M prepared
    # PostgREST's read of the same request, as it runs it: one read-only transaction, the request's settings, the
    # page as JSON (https://postgrest.org: "the response body is built by PostgreSQL"). As the superuser the
    # anon policy is spelled out (is_active).
    cat > "$WORK/pg-read-postgrest.sql" <<'SQL'
BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY;
SELECT set_config('search_path', '"public", "extensions"', true), set_config('request.jwt.claims', '{"role":"anon","iss":"supabase"}', true), set_config('request.method', 'GET', true), set_config('request.path', '/places', true), set_config('request.headers', '{"accept":"*/*","apikey":"x"}', true), set_config('request.cookies', '{}', true);
WITH pgrst_source AS ( SELECT "public"."places".* FROM "public"."places" WHERE "public"."places"."category" = 'cafe' AND "public"."places"."is_active" = TRUE ORDER BY "public"."places"."google_rating" DESC NULLS LAST LIMIT 20 OFFSET 0 ) SELECT null::bigint AS total_result_set, pg_catalog.count(_postgrest_t) AS page_total, coalesce(json_agg(_postgrest_t), '[]') AS body, nullif(current_setting('response.headers', true), '') AS response_headers, nullif(current_setting('response.status', true), '') AS response_status, '' AS response_inserted FROM ( SELECT * FROM pgrst_source ) _postgrest_t;
COMMIT;
SQL
    run_pgbench read-postgrest-simple "$WORK/pg-read-postgrest.sql"
    run_pgbench read-postgrest-prepared "$WORK/pg-read-postgrest.sql" -M prepared
    PID1="$(serve_pg "$CARAVAN_PORT")"; wait_port "$CARAVAN_PORT"; sleep 1
    local name path
    for name in health empty page; do
        case "$name" in
            health) path=/health ;;
            empty) path='/rest/v1/places?category=eq.nosuch&limit=20' ;;
            page) path="$READ_PATH" ;;
        esac
        wrk -t2 -c32 -d"$WRK_WARMUP" -H "apikey: $ANON_KEY" "http://127.0.0.1:$CARAVAN_PORT$path" > /dev/null
        for run in 1 2; do
            wait_quiet
            local backends caravan0 pg0 caravan1 pg1 rate
            backends=$(pgrep -P "$(head -1 "$PGSTATE/data/postmaster.pid")" | tr '\n' ' ')   # this cluster's processes only
            caravan0=$(cpu_ticks "$PID1"); pg0=$(cpu_ticks $backends)
            wrk -t2 -c32 -d"$WRK_DURATION" --latency -H "apikey: $ANON_KEY" "http://127.0.0.1:$CARAVAN_PORT$path" > "$RESULTS/budget-$name-run$run.txt"
            caravan1=$(cpu_ticks "$PID1"); pg1=$(cpu_ticks $backends)
            rate=$(awk '/Requests\/sec/ {print $2}' "$RESULTS/budget-$name-run$run.txt")
            log "   $name run $run ($path): $(wrk_summary "$RESULTS/budget-$name-run$run.txt"); per request: Caravan $("$PYTHON" -c "print(round(1e4 * ($caravan1 - $caravan0) / ($rate * $WRK_DURATION_S)))") µs, PostgreSQL $("$PYTHON" -c "print(round(1e4 * ($pg1 - $pg0) / ($rate * $WRK_DURATION_S)))") µs"
        done
    done
    stop_pid "$PID1"
}

serve_writers() {   # serve_writers PORT: a server whose sign-ins are cheap (bcrypt cost 4, no rate limit); echoes its pid
    CARAVAN_AUTH_BCRYPT_COST=4 CARAVAN_AUTH_RATE_LIMIT_SIGN_IN=1000000 CARAVAN_AUTH_RATE_LIMIT_SIGN_IN_PER_IDENTIFIER=1000000 serve_pg "$1"
}

make_writers() {   # make_writers URL: WRITE_USERS signed-in users in $WORK/pg-users.tsv, the places in $WORK/pg-places.txt
    "$VENV_PYTHON" - "$1" "$ANON_KEY" "$SERVICE_KEY" "$WRITE_USERS" "$WORK/pg-users.tsv" <<'PY'
import json, sys, httpx
url, anon, service, n, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
lines = []
with httpx.Client(base_url=url, timeout=60) as http:
    for i in range(n):
        email = f"writer{i}@example.com"
        # Created once (a second run on the same database finds them); the session names the user.
        http.post("/auth/v1/admin/users", headers={"apikey": anon, "Authorization": f"Bearer {service}"},
                  json={"email": email, "password": "bench-password-1", "email_confirm": True})
        session = http.post("/auth/v1/token?grant_type=password", headers={"apikey": anon},
                            json={"email": email, "password": "bench-password-1"}).json()
        lines.append(f"{session['user']['id']}\t{session['access_token']}\n")
open(out, "w").write("".join(lines))
PY
    psql_bench -c "SELECT id FROM places ORDER BY id" > "$WORK/pg-places.txt"
}

# Writes at 1, 8 and 32 connections (the curve; one wrk thread everywhere, so the pair ranges never overlap), then two instances writing at once (-c16 each): every request a
# new favorite, each wrk invocation its own share of the (user, place) pairs.
run_write_curve() {
    PID1="$(serve_writers "$CARAVAN_PORT")"; PID2="$(serve_writers $((CARAVAN_PORT + 1)))"
    wait_port "$CARAVAN_PORT"; wait_port $((CARAVAN_PORT + 1)); sleep 1
    make_writers "http://127.0.0.1:$CARAVAN_PORT"
    local slots=12 slot=0 c
    lua() { echo "-s $BENCH_DIR/write_favorites.lua $1/rest/v1/favorites -- caravan $WORK/pg-users.tsv $WORK/pg-places.txt $2 $slots"; }
    for c in 1 8 32; do
        log "== pg-write-curve: POST /rest/v1/favorites, one instance, -c$c"
        for run in 1 2; do
            slot=$((slot + 1)); wait_quiet
            wrk -t1 -c"$c" -d"$WRK_DURATION" --latency $(lua "http://127.0.0.1:$CARAVAN_PORT" "$slot") > "$RESULTS/pg-write-c$c-run$run.txt"
            log "   run $run: $(wrk_summary "$RESULTS/pg-write-c$c-run$run.txt")"
        done
    done
    log "== pg-write-two: POST /rest/v1/favorites on two instances at once, -t1 -c16 each"
    for run in 1 2; do
        wait_quiet
        slot=$((slot + 1))
        wrk -t1 -c16 -d"$WRK_DURATION" --latency $(lua "http://127.0.0.1:$CARAVAN_PORT" "$slot") > "$RESULTS/pg-write-two-a-run$run.txt" &
        local a=$!
        slot=$((slot + 1))
        wrk -t1 -c16 -d"$WRK_DURATION" --latency $(lua "http://127.0.0.1:$((CARAVAN_PORT + 1))" "$slot") > "$RESULTS/pg-write-two-b-run$run.txt"
        wait "$a"
        log "   run $run: A $(wrk_summary "$RESULTS/pg-write-two-a-run$run.txt") | B $(wrk_summary "$RESULTS/pg-write-two-b-run$run.txt") | sum $(awk '/Requests\/sec/ {s += $2} END {print s}' "$RESULTS/pg-write-two-a-run$run.txt" "$RESULTS/pg-write-two-b-run$run.txt") req/s"
    done
    log "   rows stored: $(psql_bench -c 'SELECT count(*) FROM favorites'), change-log rows: $(psql_bench -c "SELECT count(*) FROM caravan_changes WHERE table_name = 'favorites'")"
    stop_pid "$PID1"; stop_pid "$PID2"
}

run_write() {
    PID1="$(serve_writers "$CARAVAN_PORT")"
    wait_port "$CARAVAN_PORT"; sleep 1
    local url="http://127.0.0.1:$CARAVAN_PORT"
    make_writers "$url"
    local lua=("-s" "$BENCH_DIR/write_favorites.lua" "$url/rest/v1/favorites" "--" caravan "$WORK/pg-users.tsv" "$WORK/pg-places.txt")
    log "== pg-write: POST /rest/v1/favorites ($WRITE_USERS users)"
    wait_quiet
    wrk -t2 -c32 -d"$WRK_WARMUP" "${lua[@]}" 0 3 > "$RESULTS/pg-write-warmup.txt"
    for run in 1 2; do
        wait_quiet
        wrk -t2 -c32 -d"$WRK_DURATION" --latency "${lua[@]}" "$run" 3 > "$RESULTS/pg-write-run$run.txt"
        log "   run $run: $(wrk_summary "$RESULTS/pg-write-run$run.txt")  (mean $(awk '/Latency/ {print $2; exit}' "$RESULTS/pg-write-run$run.txt"))"
    done
    log "   rows stored: $(psql_bench -c 'SELECT count(*) FROM favorites'), change-log rows: $(psql_bench -c "SELECT count(*) FROM caravan_changes WHERE table_name = 'favorites'")"
    stop_pid "$PID1"
    # The floor: the insert and its change-log row in one transaction, as the pipeline writes them (random existing
    # user and place; the table is emptied first so conflicts stay rare).
    psql_bench -c "TRUNCATE favorites" > /dev/null
    # Numbered copies of the users' and places' ids, so that picking a random one is an index lookup (an OFFSET
    # scan would cost the floor more than the insert it measures).
    psql_bench -c "CREATE TABLE bench_users AS SELECT row_number() OVER (ORDER BY id) - 1 AS n, id FROM auth_users; ALTER TABLE bench_users ADD PRIMARY KEY (n)" > /dev/null
    psql_bench -c "CREATE TABLE bench_places AS SELECT row_number() OVER (ORDER BY id) - 1 AS n, id FROM places; ALTER TABLE bench_places ADD PRIMARY KEY (n)" > /dev/null
    cat > "$WORK/pg-write.sql" <<SQL
\\set p random(0, $(( $(psql_bench -c 'SELECT count(*) FROM places') - 1 )))
\\set u random(0, $(( $(psql_bench -c 'SELECT count(*) FROM auth_users') - 1 )))
BEGIN;
INSERT INTO favorites (user_id, place_id) SELECT (SELECT id FROM bench_users WHERE n = :u), (SELECT id FROM bench_places WHERE n = :p) ON CONFLICT DO NOTHING;
INSERT INTO caravan_changes (table_name, primary_key, op, record, committed_at, actor) VALUES ('favorites', '{}', 'insert', '{}', now(), 'bench');
COMMIT;
SQL
    run_pgbench write "$WORK/pg-write.sql"
}

# Why Caravan announces commits after the write transactions (CommitAnnouncer): the write floor again, then the
# same transaction with one pg_notify queued in it (as Caravan did before 9fabbe4), while a session LISTENs.
run_notify() {
    [ -f "$WORK/pg-write.sql" ] || { log "notify: run the write step first (it writes the floor's script)"; return 1; }
    sed 's/^COMMIT;/SELECT pg_notify($$bench_changes$$, $$1$$);\nCOMMIT;/' "$WORK/pg-write.sql" > "$WORK/pg-write-notify.sql"
    (echo "LISTEN bench_changes;"; sleep $(( 4 * WRK_DURATION_S + 30 ))) | psql_bench > /dev/null &
    local listener=$!
    psql_bench -c "TRUNCATE favorites" > /dev/null
    run_pgbench write-again "$WORK/pg-write.sql"
    psql_bench -c "TRUNCATE favorites" > /dev/null
    run_pgbench write-notify "$WORK/pg-write-notify.sql"
    kill "$listener" 2>/dev/null || true
}

run_two() {
    PID1="$(serve_pg "$CARAVAN_PORT")"; PID2="$(serve_pg $((CARAVAN_PORT + 1)))"
    wait_port "$CARAVAN_PORT"; wait_port $((CARAVAN_PORT + 1)); sleep 1
    log "== two instances, reads: wrk -t1 -c16 on each, at the same time"
    for run in 1 2; do
        wait_quiet
        wrk -t1 -c16 -d"$WRK_DURATION" --latency -H "apikey: $ANON_KEY" "http://127.0.0.1:$CARAVAN_PORT$READ_PATH" > "$RESULTS/pg-two-a-run$run.txt" &
        local a=$!
        wrk -t1 -c16 -d"$WRK_DURATION" --latency -H "apikey: $ANON_KEY" "http://127.0.0.1:$((CARAVAN_PORT + 1))$READ_PATH" > "$RESULTS/pg-two-b-run$run.txt"
        wait "$a"
        log "   run $run: A $(wrk_summary "$RESULTS/pg-two-a-run$run.txt") | B $(wrk_summary "$RESULTS/pg-two-b-run$run.txt") | sum $(awk '/Requests\/sec/ {s += $2} END {print s}' "$RESULTS/pg-two-a-run$run.txt" "$RESULTS/pg-two-b-run$run.txt") req/s"
    done
    stop_pid "$PID1"; stop_pid "$PID2"
}

prepare
case "${1:-all}" in
    read) run_read ;;
    read-budget) run_read; run_read_budget ;;
    write) run_write ;;
    two) run_two ;;
    write-curve) run_write_curve ;;
    notify) run_write; run_notify ;;
    all) run_read; run_write; run_notify; run_two; run_write_curve ;;
    *) echo "usage: $0 read|write|two|write-curve|notify|read-budget|all" >&2; exit 2 ;;
esac

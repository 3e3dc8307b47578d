#!/usr/bin/env bash
# Realtime benchmarks. One server at a time, loopback only, release build.
#
#   bench/realtime_bench.sh caravan      # fan-out (`caravan bench realtime`: REALTIME_SOCKETS sockets of REALTIME_USERS
#                                        # users, favorites owner policy)
#   bench/realtime_bench.sh pocketbase   # the same harness against PocketBase 0.40.6 realtime (SSE, same owner rule)
#   bench/realtime_bench.sh idle         # REALTIME_IDLE_SOCKETS (10000) idle subscribed sockets of REALTIME_USERS users for
#                                        # REALTIME_IDLE_SECONDS (60): the server's RSS per socket and its CPU seconds
#   bench/realtime_bench.sh pg2          # two instances on one PostgreSQL database (CARAVAN_TEST_DATABASE_URL, from
#                                        # `eval "$(scripts/postgres-cluster start)"`): subscribers on the second,
#                                        # writers through the first (--write-url)
#   bench/realtime_bench.sh broadcast    # broadcast round trip (Python, bench/realtime_bench.py)
#   bench/realtime_bench.sh all          # caravan, then pocketbase
#
# Writers: REALTIME_WRITERS (4) keep-alive connections, REALTIME_BATCH (1) favorites per request (one transaction), for
# REALTIME_DURATION (10) s; REALTIME_VSN (1.0.0) for Caravan's sockets. The harness's JSON lines go to
# bench/work/results/realtime.txt. HARNESS (default: $CARAVAN) is the binary that runs `bench realtime` (to drive an
# older server build with the current harness).
source "$(dirname "$0")/common.sh"

CARAVAN_PORT="${CARAVAN_PORT:-18080}"
PB_PORT="${PB_PORT:-18090}"
USERS="${REALTIME_USERS:-100}"
SOCKETS="${REALTIME_SOCKETS:-1000}"
WRITERS="${REALTIME_WRITERS:-4}"
DURATION="${REALTIME_DURATION:-10}"
BATCH="${REALTIME_BATCH:-1}"
VSN="${REALTIME_VSN:-1.0.0}"
IDLE_SOCKETS="${REALTIME_IDLE_SOCKETS:-10000}"
IDLE_SECONDS="${REALTIME_IDLE_SECONDS:-60}"
HARNESS="${HARNESS:-$CARAVAN}"
BENCH_PYTHON="${BENCH_PYTHON:-$BENCH_DIR/.venv/bin/python}"    # broadcast only: websockets (pip install websockets==15.0.1)
LOG="$RESULTS/realtime.txt"

log() { echo "$*" | tee -a "$LOG"; }

# quiet: wait for a quiet machine (common.sh), unless REALTIME_WAIT_QUIET=0; either way log the load and the busiest
# processes, so a measurement taken on a shared machine says so.
quiet() {
    if [ "${REALTIME_WAIT_QUIET:-1}" != 0 ]; then wait_quiet; fi
    log "   load: $(cut -d' ' -f1-3 /proc/loadavg); busiest: $(ps -eo pcpu,comm --sort=-pcpu | sed -n '2,4p' | xargs)"
}

# start_caravan DIR: a fresh deployment served on CARAVAN_PORT; sets SERVICE_KEY, ANON_KEY and SERVER_PID.
start_caravan() {
    local dir="$1"
    rm -rf "$dir"; mkdir -p "$dir"
    "$CARAVAN" migrate --data-dir "$dir/data" > /dev/null  # only migrate and serve create a deployment
    local keys
    keys="$("$CARAVAN" keys --data-dir "$dir/data" --json)"
    ANON_KEY="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"
    SERVICE_KEY="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["service_role_key"])')"
    # The harness signs its users in with passwords: lift the per-IP sign-in limit (30 per window by default).
    # The broadcast round trip sends back to back: lift the per-socket message rate limit (100/s by default).
    # The idle run holds 10,000 sockets: the default socket cap, raised so that it is not the limit measured.
    CARAVAN_AUTH_RATE_LIMIT_SIGN_IN=100000 CARAVAN_REALTIME_EVENTS_PER_SECOND=1000000 CARAVAN_REALTIME_MAX_SOCKETS=20000 \
        "$CARAVAN" serve --data-dir "$dir/data" --port "$CARAVAN_PORT" --log-level warning > "$dir/serve.log" 2>&1 &
    SERVER_PID=$!
    wait_port "$CARAVAN_PORT"
    sleep 2
}

run_caravan() {
    start_caravan "$WORK/realtime-caravan"
    trap "stop_pid $SERVER_PID" EXIT
    quiet
    log "== caravan fan-out: $SOCKETS sockets, $USERS users, $WRITERS writers, batch $BATCH, vsn $VSN, ${DURATION}s"
    "$HARNESS" bench realtime --url "http://127.0.0.1:$CARAVAN_PORT" --service-key "$SERVICE_KEY" --sockets "$SOCKETS" --users "$USERS" \
        --writers "$WRITERS" --seconds "$DURATION" --batch "$BATCH" --vsn "$VSN" --server-pid "$SERVER_PID" | tee -a "$LOG"
    stop_pid "$SERVER_PID"; trap - EXIT
}

run_idle() {
    start_caravan "$WORK/realtime-idle"
    trap "stop_pid $SERVER_PID" EXIT
    quiet
    log "== caravan idle: $IDLE_SOCKETS sockets, $USERS users, vsn $VSN, ${IDLE_SECONDS}s of heartbeats (every 25 s)"
    "$HARNESS" bench realtime --idle --url "http://127.0.0.1:$CARAVAN_PORT" --service-key "$SERVICE_KEY" --sockets "$IDLE_SOCKETS" \
        --users "$USERS" --seconds "$IDLE_SECONDS" --places 1 --vsn "$VSN" --server-pid "$SERVER_PID" | tee -a "$LOG"
    log "   after: load $(cut -d' ' -f1-3 /proc/loadavg)"
    stop_pid "$SERVER_PID"; trap - EXIT
}

run_pg2() {
    local admin="${CARAVAN_TEST_DATABASE_URL:?pg2 needs eval \"\$(scripts/postgres-cluster start)\"}" dir="$WORK/realtime-pg2"
    local database="caravan_realtime_$$"
    rm -rf "$dir"; mkdir -p "$dir"
    psql "$admin" -qc "CREATE DATABASE $database" > /dev/null
    local url="${admin%%/postgres\?*}/$database?sslmode=disable"
    "$CARAVAN" migrate --database "$url" --data-dir "$dir/one" > /dev/null
    SERVICE_KEY="$("$CARAVAN" keys --database "$url" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["service_role_key"])')"
    local second=$((CARAVAN_PORT + 1)) pids=()
    for instance in one two; do
        local port=$CARAVAN_PORT
        [ "$instance" = two ] && port=$second
        CARAVAN_AUTH_RATE_LIMIT_SIGN_IN=100000 CARAVAN_REALTIME_EVENTS_PER_SECOND=1000000 \
            "$CARAVAN" serve --database "$url" --data-dir "$dir/$instance" --port "$port" --log-level warning > "$dir/$instance.log" 2>&1 &
        pids+=($!)
    done
    trap "stop_pid ${pids[0]}; stop_pid ${pids[1]}" EXIT
    wait_port "$CARAVAN_PORT"; wait_port "$second"; sleep 2
    quiet
    log "== caravan on PostgreSQL, two instances: $SOCKETS sockets on the second, $USERS users, $WRITERS writers through the first, batch $BATCH, ${DURATION}s"
    "$HARNESS" bench realtime --url "http://127.0.0.1:$second" --write-url "http://127.0.0.1:$CARAVAN_PORT" --service-key "$SERVICE_KEY" \
        --sockets "$SOCKETS" --users "$USERS" --writers "$WRITERS" --seconds "$DURATION" --batch "$BATCH" --vsn "$VSN" --server-pid "${pids[1]}" | tee -a "$LOG"
    stop_pid "${pids[0]}"; stop_pid "${pids[1]}"; trap - EXIT
    psql "$admin" -qc "DROP DATABASE $database" > /dev/null || true
}

run_broadcast() {
    start_caravan "$WORK/realtime-broadcast"
    trap "stop_pid $SERVER_PID" EXIT
    quiet
    log "== caravan broadcast round trip"
    "$BENCH_PYTHON" "$BENCH_DIR/realtime_bench.py" broadcast --url "http://127.0.0.1:$CARAVAN_PORT" --anon "$ANON_KEY" | tee -a "$LOG"
    stop_pid "$SERVER_PID"; trap - EXIT
}

run_pocketbase() {
    local parent="$WORK/realtime-pocketbase" email="bench@example.com" password="bench-password-123"
    local dir="$parent/pb_data"
    local pbflags=(--dir "$dir" --migrationsDir "$parent/pb_migrations" --automigrate=false)
    rm -rf "$parent"; mkdir -p "$parent"
    "$POCKETBASE" superuser upsert "$email" "$password" "${pbflags[@]}" > /dev/null
    "$POCKETBASE" serve --http "127.0.0.1:$PB_PORT" "${pbflags[@]}" > "$parent/serve.log" 2>&1 &
    local pid=$!
    trap "stop_pid $pid" EXIT
    wait_port "$PB_PORT"
    quiet
    log "== pocketbase fan-out: $SOCKETS SSE subscribers, $USERS users, $WRITERS writers, batch $BATCH, ${DURATION}s"
    "$HARNESS" bench realtime --target pocketbase --url "http://127.0.0.1:$PB_PORT" --superuser "$email:$password" --sockets "$SOCKETS" \
        --users "$USERS" --writers "$WRITERS" --seconds "$DURATION" --batch "$BATCH" --server-pid "$pid" | tee -a "$LOG"
    stop_pid "$pid"; trap - EXIT
}

case "${1:-all}" in
    caravan) run_caravan ;;
    pocketbase) run_pocketbase ;;
    broadcast) run_broadcast ;;
    idle) run_idle ;;
    pg2) run_pg2 ;;
    all) run_caravan; run_pocketbase ;;
    *) echo "usage: $0 caravan|pocketbase|idle|pg2|broadcast|all" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Realtime benchmarks. One server at a time, loopback only, release build.
#
#   bench/realtime_bench.sh caravan      # fan-out (1,000 sockets of 100 users, favorites owner policy), memory per idle
#                                        # socket, broadcast round trip
#   bench/realtime_bench.sh pocketbase   # the same fan-out against PocketBase 0.40.6 realtime (SSE, same owner rule)
#   bench/realtime_bench.sh all
#
# Writers: REALTIME_WRITERS (8) concurrent loops, REALTIME_BATCH (1) favorites per request (one transaction), for REALTIME_DURATION (10) s; subscribers
# in 2 Python processes (bench/realtime_bench.py). Summaries go to bench/work/results/realtime.txt.
source "$(dirname "$0")/common.sh"

CARAVAN_PORT="${CARAVAN_PORT:-18080}"
PB_PORT="${PB_PORT:-18090}"
USERS="${REALTIME_USERS:-100}"
SOCKETS="${REALTIME_SOCKETS:-1000}"
WRITERS="${REALTIME_WRITERS:-8}"
DURATION="${REALTIME_DURATION:-10}"
BATCH="${REALTIME_BATCH:-1}"
VENV_PYTHON="${VENV_PYTHON:-$ROOT/.venv/bin/python}"          # PyJWT (caravan_users.py)
BENCH_PYTHON="${BENCH_PYTHON:-$BENCH_DIR/.venv/bin/python}"    # websockets + httpx (pip install websockets==15.0.1 httpx)
LOG="$RESULTS/realtime.txt"

log() { echo "$*" | tee -a "$LOG"; }

# quiet: wait for a quiet machine (common.sh), unless REALTIME_WAIT_QUIET=0; either way log the load and the busiest
# processes, so a measurement taken on a shared machine says so.
quiet() {
    if [ "${REALTIME_WAIT_QUIET:-1}" != 0 ]; then wait_quiet; fi
    log "   load: $(cut -d' ' -f1-3 /proc/loadavg); busiest: $(ps -eo pcpu,comm --sort=-pcpu | sed -n '2,4p' | xargs)"
}

run_caravan() {
    local dir="$WORK/realtime-caravan"
    rm -rf "$dir"; mkdir -p "$dir"
    "$CARAVAN" migrate --data-dir "$dir/data" > /dev/null  # only migrate and serve create a deployment
    "$CARAVAN" import places "$PLACES" --data-dir "$dir/data" --json > /dev/null
    local keys anon service
    keys="$("$CARAVAN" keys --data-dir "$dir/data" --json)"
    anon="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"
    service="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["service_role_key"])')"
    "$VENV_PYTHON" "$BENCH_DIR/caravan_users.py" --data-dir "$dir/data" --users "$USERS" --out "$dir/users.tsv" --places-out "$dir/places.txt" > /dev/null
    # The broadcast round trip sends back to back: lift the per-socket message rate limit (100/s by default).
    CARAVAN_REALTIME_EVENTS_PER_SECOND=1000000 \
        "$CARAVAN" serve --data-dir "$dir/data" --port "$CARAVAN_PORT" --log-level warning > "$dir/serve.log" 2>&1 &
    local pid=$!
    trap "stop_pid $pid" EXIT
    wait_port "$CARAVAN_PORT"
    sleep 2
    quiet
    log "== caravan fan-out: $SOCKETS sockets, $USERS users, $WRITERS writers, ${DURATION}s"
    "$BENCH_PYTHON" "$BENCH_DIR/realtime_bench.py" caravan --url "http://127.0.0.1:$CARAVAN_PORT" --anon "$anon" --service "$service" \
        --users "$dir/users.tsv" --places "$dir/places.txt" --sockets "$SOCKETS" --writers "$WRITERS" --batch "$BATCH" --duration "$DURATION" --pid "$pid" | tee -a "$LOG"
    quiet
    log "== caravan broadcast round trip"
    "$BENCH_PYTHON" "$BENCH_DIR/realtime_bench.py" broadcast --url "http://127.0.0.1:$CARAVAN_PORT" --anon "$anon" | tee -a "$LOG"
    log "   server VmHWM $(mib "$(hwm_kb "$pid")") MiB"
    stop_pid "$pid"; trap - EXIT
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
    "$PYTHON" "$BENCH_DIR/pb_write_setup.py" --url "http://127.0.0.1:$PB_PORT" --email "$email" --password "$password" \
        --users "$USERS" --out "$parent/users.tsv" > /dev/null
    "$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); d=d["places"] if isinstance(d,dict) else d; print("\n".join(e["id"].strip() for e in d))' "$PLACES" > "$parent/places.txt"
    quiet
    log "== pocketbase fan-out: $SOCKETS SSE subscribers, $USERS users, $WRITERS writers, ${DURATION}s"
    "$BENCH_PYTHON" "$BENCH_DIR/realtime_bench.py" pocketbase --url "http://127.0.0.1:$PB_PORT" --email "$email" --password "$password" \
        --users "$parent/users.tsv" --places "$parent/places.txt" --sockets "$SOCKETS" --writers "$WRITERS" --batch "$BATCH" --duration "$DURATION" --pid "$pid" | tee -a "$LOG"
    stop_pid "$pid"; trap - EXIT
}

case "${1:-all}" in
    caravan) run_caravan ;;
    pocketbase) run_pocketbase ;;
    all) run_caravan; run_pocketbase ;;
    *) echo "usage: $0 caravan|pocketbase|all" >&2; exit 2 ;;
esac

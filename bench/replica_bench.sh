#!/usr/bin/env bash
# The PostgreSQL REST read of postgres_bench.sh served by the primary alone and with one streaming standby as a read
# replica (`caravan serve --read-replica`), in the same run on the same machine; then the cost of read-your-writes
# (replica_token_bench.py).
#
#   bench/replica_bench.sh [read|token|all]      (default all)
#
# Two clusters of scripts/postgres-cluster (fsync off, synchronous_commit off on its command line) on loopback:
# the primary in /tmp/rb-primary and a `standby` of it in /tmp/rb-standby, both on this machine, so the standby
# replays and serves reads on the same cores as the primary, Caravan and wrk. SYNC_COMMIT=on (the default) sets
# `ALTER ROLE postgres SET synchronous_commit = on` on the primary, as a production server has it (a commit flushes
# its WAL before it answers; the standby is not waited for), so a write reaches the standby at once; SYNC_COMMIT=off
# keeps the cluster's setting: an asynchronous commit's WAL leaves only at the WAL writer's next round (up to
# wal_writer_delay, 200 ms), which the token wait then pays.
#
# read: two servers at once, A `serve --database PRIMARY` and B `serve --database PRIMARY --read-replica STANDBY`;
# each warmed up 5 s, then ROUNDS (3) rounds of A then B, each run wrk -t2 -c32 -d20s --latency on the read of
# BENCHMARKS.md (anon, places?category=eq.cafe&order=google_rating.desc.nullslast&limit=20). Per run: load average,
# transactions on each PostgreSQL server (pg_stat_database) and CPU of each (/proc). token: replica_token_bench.py
# against B, then A (TOKEN_SAMPLES of each kind). QUIET_WAIT=0 measures at once on a busy machine (say so).
source "$(dirname "$0")/common.sh"

PORT_A="${PORT_A:-18090}"
PORT_B="${PORT_B:-18091}"
ROUNDS="${ROUNDS:-3}"
TOKEN_SAMPLES="${TOKEN_SAMPLES:-500}"
SYNC_COMMIT="${SYNC_COMMIT:-on}"
SERVERS="${SERVERS:-A B}"
SERVE_B_PREFIX="${SERVE_B_PREFIX:-}"   # SERVERS=A: the primary alone only
VENV_PYTHON="${VENV_PYTHON:-$ROOT/.venv/bin/python}"
LOG="$RESULTS/replica.txt"
PRIMARY_STATE=/tmp/rb-primary
STANDBY_STATE=/tmp/rb-standby
READ_PATH='/rest/v1/places?category=eq.cafe&order=google_rating.desc.nullslast&limit=20'

log() { echo "$*" | tee -a "$LOG"; }
cluster() { CARAVAN_PG_STATE="$1" "$ROOT/scripts/postgres-cluster" "${@:2}"; }
port_of() { cat "$1/port"; }
sql_at() { psql -h 127.0.0.1 -p "$1" -U postgres -qtAX "${@:2}"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
# cluster_ticks STATE: user + system clock ticks of every process of that cluster.
cluster_ticks() {
    local pid total=0
    for pid in $(head -1 "$1/data/postmaster.pid") $(pgrep -P "$(head -1 "$1/data/postmaster.pid")"); do
        total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo "$total"
}
pid_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
xacts() { sql_at "$1" -d caravan_bench -c "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'caravan_bench'"; }

cleanup() {
    [ "$BASHPID" = "$$" ] || return 0   # the main shell only, not a command substitution's subshell
    stop_pid "${PID_A:-}"; stop_pid "${CPU_PID_B:-}"; stop_pid "${PID_B:-}"
    cluster "$STANDBY_STATE" stop || true
    cluster "$PRIMARY_STATE" stop || true
}

prepare() {
    trap cleanup EXIT
    cluster "$PRIMARY_STATE" start > /dev/null
    PRIMARY_PORT="$(port_of "$PRIMARY_STATE")"
    sql_at "$PRIMARY_PORT" -d postgres -c "CREATE DATABASE caravan_bench"
    [ "$SYNC_COMMIT" = on ] && sql_at "$PRIMARY_PORT" -d postgres -c "ALTER ROLE postgres SET synchronous_commit = on"
    PRIMARY_URL="postgres://postgres@127.0.0.1:$PRIMARY_PORT/caravan_bench?sslmode=disable"
    # import needs a deployment in the database: migrate creates it
    "$CARAVAN" migrate --database "$PRIMARY_URL" --data-dir "$WORK/rb-migrate" > "$WORK/rb-migrate.log"
    "$CARAVAN" import places "$PLACES" --database "$PRIMARY_URL" --json > "$WORK/rb-import.json"
    # pg_basebackup starts with a spread checkpoint (minutes on an idle cluster); an immediate one ends it at once.
    ( sleep 2; sql_at "$PRIMARY_PORT" -d postgres -c CHECKPOINT ) &
    cluster "$STANDBY_STATE" standby "$PRIMARY_PORT" > /dev/null
    wait
    STANDBY_PORT="$(port_of "$STANDBY_STATE")"
    STANDBY_URL="postgres://postgres@127.0.0.1:$STANDBY_PORT/caravan_bench?sslmode=disable"
    ANON_KEY="$("$CARAVAN" keys --database "$PRIMARY_URL" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"
    SERVICE_KEY="$("$CARAVAN" keys --database "$PRIMARY_URL" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["service_role_key"])')"
    rm -rf "$WORK/rb-serve-a" "$WORK/rb-serve-b"
    "$CARAVAN" serve --database "$PRIMARY_URL" --data-dir "$WORK/rb-serve-a" --port "$PORT_A" --log-level notice > "$WORK/rb-serve-a.log" 2>&1 &
    PID_A=$!
    wait_port "$PORT_A"
    if [[ "$SERVERS" == *B* ]]; then
        # SERVE_B_PREFIX: a command B runs under (e.g. gdb … --args, as in the history file of 2026-12-07).
        $SERVE_B_PREFIX "$CARAVAN" serve --database "$PRIMARY_URL" --read-replica "$STANDBY_URL" --data-dir "$WORK/rb-serve-b" --port "$PORT_B" --log-level notice > "$WORK/rb-serve-b.log" 2>&1 &
        PID_B=$!
        wait_port "$PORT_B"
        # the server's own pid for its CPU (under a prefix, the prefix's child)
        CPU_PID_B=$PID_B; [ -n "$SERVE_B_PREFIX" ] && CPU_PID_B="$(pgrep -P "$PID_B" | head -1)"
    fi
    sleep 3
    log "# replica_bench (servers $SERVERS) $(date -u +%FT%TZ) $(git -C "$ROOT" rev-parse --short HEAD) caravan $CARAVAN; load $(load)"
    log "  import: $("$PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1])); print({k: s[k] for k in ("total","inserted","rejected")})' "$WORK/rb-import.json")"
    log "  primary 127.0.0.1:$PRIMARY_PORT, standby 127.0.0.1:$STANDBY_PORT (in recovery: $(sql_at "$STANDBY_PORT" -d postgres -c 'SELECT pg_is_in_recovery()')), synchronous_commit for Caravan's sessions: $(sql_at "$PRIMARY_PORT" -d caravan_bench -c 'SHOW synchronous_commit')"
    log "  A: serve --database PRIMARY (pid $PID_A, :$PORT_A); B: serve --database PRIMARY --read-replica STANDBY (pid ${PID_B:-not started}, :$PORT_B)"
}

run_read() {
    local name port pid
    for name in $SERVERS; do
        port=$PORT_A; [ "$name" = B ] && port=$PORT_B
        wrk -t2 -c32 -d"$WRK_WARMUP" -H "apikey: $ANON_KEY" "http://127.0.0.1:$port$READ_PATH" > "$RESULTS/rb-read-$name-warmup.txt"
        log "  warm-up $name: $(wrk_summary "$RESULTS/rb-read-$name-warmup.txt")"
    done
    for round in $(seq 1 "$ROUNDS"); do
        for name in $SERVERS; do
            port=$PORT_A pid=$PID_A; [ "$name" = B ] && port=$PORT_B pid=$CPU_PID_B
            wait_quiet
            local load0 px0 sx0 pc0 sc0 cc0 px1 sx1 pc1 sc1 cc1 out="$RESULTS/rb-read-$name-run$round.txt"
            load0="$(load)"
            px0=$(xacts "$PRIMARY_PORT"); sx0=$(xacts "$STANDBY_PORT")
            pc0=$(cluster_ticks "$PRIMARY_STATE"); sc0=$(cluster_ticks "$STANDBY_STATE"); cc0=$(pid_ticks "$pid")
            wrk -t2 -c32 -d"$WRK_DURATION" --latency -H "apikey: $ANON_KEY" "http://127.0.0.1:$port$READ_PATH" > "$out"
            pc1=$(cluster_ticks "$PRIMARY_STATE"); sc1=$(cluster_ticks "$STANDBY_STATE"); cc1=$(pid_ticks "$pid")
            sleep 1   # pg_stat_database is flushed at most once a second
            px1=$(xacts "$PRIMARY_PORT"); sx1=$(xacts "$STANDBY_PORT")
            log "  round $round $name: $(wrk_summary "$out")  | load before $load0, after $(load) | transactions: primary $((px1 - px0)), standby $((sx1 - sx0)) | CPU s: Caravan $(( (cc1 - cc0) / 100 )), primary PG $(( (pc1 - pc0) / 100 )), standby PG $(( (sc1 - sc0) / 100 ))"
        done
    done
    if [[ "$SERVERS" == *B* ]]; then
        log "  B: $(kill -0 "$PID_B" 2>/dev/null && echo running || echo "NOT RUNNING (see $WORK/rb-serve-b.log)"); replica taken out of service $(grep -ciE 'taken out of service' "$WORK/rb-serve-b.log" || true) times, put in $(grep -ciE 'replica in service' "$WORK/rb-serve-b.log" || true) times"
    fi
}

run_token() {
    local name port
    for name in $(echo "$SERVERS" | rev); do
        port=$PORT_A; [ "$name" = B ] && port=$PORT_B
        log "  token bench on $name (load before $(load)):"
        "$VENV_PYTHON" "$BENCH_DIR/replica_token_bench.py" --url "http://127.0.0.1:$port" --anon "$ANON_KEY" --service "$SERVICE_KEY" \
            --samples "$TOKEN_SAMPLES" --json "$RESULTS/rb-token-$name.json" | sed 's/^/    /' | tee -a "$LOG"
        log "    (load after $(load))"
    done
}

prepare
case "${1:-all}" in
    read) run_read ;;
    token) run_token ;;
    all) run_read; run_token ;;
    *) echo "usage: $0 read|token|all" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Visibility moves: bench/moves_bench.py (a join and a removal of a group with 1,000 rows, beside a fresh snapshot; a
# 1,000-change delta pull by a user no change concerns; a 1,000-change anon delta of places) on SQLite and PostgreSQL, with this build and, given
# CARAVAN_BEFORE, the same workload on an earlier build in the same run; then bench/watch_bench.py (a watching
# caravan-client converging on a join and a removal) with CARAVAN_CLIENT.
#
#   CARAVAN_BEFORE=/path/to/old/caravan CARAVAN_CLIENT=/path/to/caravan-client bench/moves_bench.sh [ROUNDS]
#
# PostgreSQL: the cluster of scripts/postgres-cluster (started here if it is not running). Summaries: bench/work/results/moves.txt.
source "$(dirname "$0")/common.sh"

ROUNDS="${1:-5}"
LOG="$RESULTS/moves.txt"
VENV_PYTHON="${VENV_PYTHON:-$ROOT/.venv/bin/python}"
log() { echo "$*" | tee -a "$LOG"; }
eval "$("$ROOT/scripts/postgres-cluster" start)"

# serve_and_run LABEL BINARY ENGINE: a fresh deployment of BINARY on ENGINE, the moves bench against it (and the watch
# bench when CARAVAN_CLIENT is set and BINARY is this build).
serve_and_run() {
    local label="$1" binary="$2" engine="$3"
    local dir="$WORK/moves-$label-$engine" args=()
    rm -rf "$dir" "$dir-places"
    args=(--data-dir "$dir")
    # 2,000 generated places (for the places delta).
    if [ "$engine" = postgres ]; then
        local db="caravan_moves_${label}_$$"
        local url="${CARAVAN_TEST_DATABASE_URL%%/postgres\?*}/$db?sslmode=disable"
        psql "$CARAVAN_TEST_DATABASE_URL" -qc "CREATE DATABASE $db" > /dev/null
        "$binary" bench generate-places 2000 --seed 1 --data-dir "$dir-places" > /dev/null
        "$binary" copy --from "$dir-places" --to "$url" > /dev/null
        args+=(--database "$url")
    else
        "$binary" bench generate-places 2000 --seed 1 --data-dir "$dir" > /dev/null
    fi
    local port; port="$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    local keys anon service
    keys="$("$binary" keys --json "${args[@]}")"
    anon="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"
    service="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["service_role_key"])')"
    CARAVAN_AUTH_RATE_LIMIT_SIGN_UP=100000 "$binary" serve "${args[@]}" --port "$port" --log-level warning > "$dir.serve.log" 2>&1 &
    local pid=$!
    wait_port "$port"
    log "== $label $engine moves: $("$VENV_PYTHON" "$BENCH_DIR/moves_bench.py" "http://127.0.0.1:$port" "$anon" "$service" --rounds "$ROUNDS")"
    if [ "$label" = this ] && [ -n "${CARAVAN_CLIENT:-}" ]; then
        log "== $label $engine watch: $("$VENV_PYTHON" "$BENCH_DIR/watch_bench.py" "http://127.0.0.1:$port" "$anon" "$service" "$CARAVAN_CLIENT" --rounds 10)"
    fi
    stop_pid "$pid"
}

log "# $(date -u +%FT%TZ) $(nproc) cores, $(uname -r); this: $CARAVAN ($(git -C "$ROOT" rev-parse --short HEAD)); before: ${CARAVAN_BEFORE:-none}"
for engine in sqlite postgres; do
    serve_and_run this "$CARAVAN" "$engine"
    if [ -n "${CARAVAN_BEFORE:-}" ]; then serve_and_run before "$CARAVAN_BEFORE" "$engine"; fi
done

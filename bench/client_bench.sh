#!/usr/bin/env bash
# Client SDK benchmarks with the release `caravan-client` against the release `caravan serve` on SQLite:
# initial sync of the generated places into an empty LocalStore beside inserting the same rows into the same local
# schema with raw SQLite (Python sqlite3, one transaction); a delta of 1,000 changes; draining 1,000 offline writes.
#
#   bench/client_bench.sh        # needs bench/work/sync-sqlite from `bench/sync_bench.sh sqlite` (100k places)
#
# Summaries: bench/work/results/client.txt.
source "$(dirname "$0")/common.sh"

CLIENT="${CLIENT:-$ROOT/.build-release/release/caravan-client}"
DATA="$WORK/sync-sqlite"
LOG="$RESULTS/client.txt"
log() { echo "$*" | tee -a "$LOG"; }
time_s() { local s e; s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f\n", e - s }'; }
median3() { sort -n | sed -n 2p; }

[ -f "$DATA/caravan.sqlite" ] || { echo "run bench/sync_bench.sh sqlite first" >&2; exit 2; }
port="$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
keys="$("$CARAVAN" keys --json --data-dir "$DATA")"
anon="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"
service="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["service_role_key"])')"
CARAVAN_AUTH_RATE_LIMIT_SIGN_UP=100000 "$CARAVAN" serve --data-dir "$DATA" --port "$port" --log-level warning > "$WORK/client-serve.log" 2>&1 &
pid=$!
trap 'stop_pid $pid' EXIT
wait_port "$port"
export CARAVAN_CLIENT_URL="http://127.0.0.1:$port" CARAVAN_CLIENT_APIKEY="$anon"
log "# $(date -u +%FT%TZ) $(nproc) cores; $CLIENT"

initial=(); raw=()
for run in 1 2 3; do
    store="$WORK/client-initial-$run.sqlite"; rm -f "$store"*
    initial+=("$(CARAVAN_CLIENT_STORE="$store" time_s "$CLIENT" sync --tables places)")
    raw+=("$("$PYTHON" "$BENCH_DIR/client_raw_insert.py" "$store" "$WORK/client-raw-$run.sqlite")")
done
rows="$(sqlite3 "$WORK/client-initial-1.sqlite" 'SELECT count(*) FROM places')"
i="$(printf '%s\n' "${initial[@]}" | median3)"; r="$(printf '%s\n' "${raw[@]}" | median3)"
log "== initial sync of $rows places into an empty LocalStore: ${initial[*]} s (median $i); raw sqlite3 insert of the same rows, same schema, one transaction: ${raw[*]} s (median $r) → $(awk -v a="$i" -v b="$r" 'BEGIN { printf "%.2f", a / b }')×"

store="$WORK/client-initial-1.sqlite"
delta=()
for run in 1 2 3; do
    ids="$(sqlite3 "$store" "SELECT id FROM places ORDER BY id LIMIT 1000 OFFSET $((run * 1000))" | paste -sd, -)"
    curl -sf -X PATCH "$CARAVAN_CLIENT_URL/rest/v1/places?id=in.($ids)" -H "apikey: $service" -H "Content-Type: application/json" -d "{\"name_en\":\"client bench $run\"}" > /dev/null
    delta+=("$(CARAVAN_CLIENT_STORE="$store" time_s "$CLIENT" sync --tables places)")
done
log "== a delta of 1,000 changed places to converge (sync): ${delta[*]} s (median $(printf '%s\n' "${delta[@]}" | median3))"

drain=()
for run in 1 2 3; do
    user_store="$WORK/client-push-$run.sqlite"; rm -f "$user_store"*
    user="$(CARAVAN_CLIENT_STORE="$user_store" "$CLIENT" sign-up --email "bench-$run-$RANDOM$RANDOM@example.com" --password "bench password 123" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["user_id"])')"
    CARAVAN_CLIENT_STORE="$user_store" "$CLIENT" sync --tables favorites > /dev/null
    rows_json="$(sqlite3 "$store" "SELECT id FROM places ORDER BY id LIMIT 1000" | "$PYTHON" -c "import json,sys; print(json.dumps([{'user_id': '$user', 'place_id': l.strip(), 'note': 'offline'} for l in sys.stdin]))")"
    CARAVAN_CLIENT_STORE="$user_store" "$CLIENT" insert favorites "$rows_json" > /dev/null
    drain+=("$(CARAVAN_CLIENT_STORE="$user_store" time_s "$CLIENT" sync --tables favorites)")
done
log "== draining 1,000 offline writes (push in batches of 100, then pull): ${drain[*]} s (median $(printf '%s\n' "${drain[@]}" | median3))"

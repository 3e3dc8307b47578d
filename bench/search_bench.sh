#!/usr/bin/env bash
# Search over HTTP on the real 5,487 places: Caravan's search_places RPC vs PocketBase's list filter `name ~ 'q'`,
# one server at a time, same wrk settings as read_bench.sh (5 s warm-up, two 20 s runs, -t2 -c32).
#
#   bench/search_bench.sh [QUERY]     # default QUERY: starb (type-ahead for Starbucks)
#
# Not the same work: Caravan folds Arabic/Latin text, tokenizes, ranks by bm25 blended with the rating and applies
# the read policy; PocketBase's `~` is a LIKE '%q%' scan over the two name columns (ASCII case-insensitive only),
# unranked. Summaries are appended to bench/work/results/search.txt.
source "$(dirname "$0")/common.sh"

QUERY="${1:-starb}"
CARAVAN_PORT="${CARAVAN_PORT:-18080}"
PB_PORT="${PB_PORT:-18090}"
ENCODED="$("$PYTHON" -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$QUERY")"
CARAVAN_PATH="/rest/v1/rpc/search_places?query=$ENCODED&max_results=20"
PB_FILTER="$("$PYTHON" -c 'import sys,urllib.parse; q=sys.argv[1].replace("\x27","\\\x27"); print(urllib.parse.quote(f"(name_ar~\x27{q}\x27||name_en~\x27{q}\x27)"))' "$QUERY")"
PB_PATH="/api/collections/places/records?filter=$PB_FILTER&perPage=20&skipTotal=1"

measure_search() {   # NAME PID URL [headers]: warm-up, then two runs
    local name="$1" pid="$2" url="$3"; shift 3
    echo "== $name: $url" | tee -a "$RESULTS/search.txt"
    wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$WRK_WARMUP" "$@" "$url" > /dev/null
    for run in 1 2; do
        wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$WRK_DURATION" --latency "$@" "$url" > "$RESULTS/search-$name-$run.txt"
        echo "   run $run: $(wrk_summary "$RESULTS/search-$name-$run.txt")" | tee -a "$RESULTS/search.txt"
    done
}

echo "# $(date -u +%FT%TZ) search_bench.sh $QUERY" >> "$RESULTS/search.txt"

dir="$WORK/caravan-search"
rm -rf "$dir"
"$CARAVAN" migrate --data-dir "$dir" > /dev/null  # only migrate and serve create a deployment
"$CARAVAN" import places "$PLACES" --data-dir "$dir" > /dev/null
ANON_KEY="$("$CARAVAN" keys --data-dir "$dir" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"
"$CARAVAN" serve --data-dir "$dir" --port "$CARAVAN_PORT" --log-level warning > "$WORK/caravan-search.log" 2>&1 &
CARAVAN_PID=$!
trap 'stop_pid $CARAVAN_PID' EXIT
wait_port "$CARAVAN_PORT"; sleep 1
echo "   check: $(curl -s -H "apikey: $ANON_KEY" "http://127.0.0.1:$CARAVAN_PORT$CARAVAN_PATH" | "$PYTHON" -c 'import json,sys; r=json.load(sys.stdin); print(len(r), "rows, first", r[0]["name_en"] if r else None)')" | tee -a "$RESULTS/search.txt"
measure_search caravan "$CARAVAN_PID" "http://127.0.0.1:$CARAVAN_PORT$CARAVAN_PATH" -H "apikey: $ANON_KEY"
stop_pid "$CARAVAN_PID"; trap - EXIT

parent="$WORK/pocketbase-search"; email="bench@example.com"; password="bench-password-123"
pbflags=(--dir "$parent/pb_data" --migrationsDir "$parent/pb_migrations" --automigrate=false)
rm -rf "$parent"
"$POCKETBASE" superuser upsert "$email" "$password" "${pbflags[@]}" > /dev/null
"$POCKETBASE" serve --http "127.0.0.1:$PB_PORT" "${pbflags[@]}" > "$WORK/pocketbase-search.log" 2>&1 &
PB_PID=$!
trap 'stop_pid $PB_PID' EXIT
wait_port "$PB_PORT"
"$PYTHON" "$BENCH_DIR/pb_setup.py" --url "http://127.0.0.1:$PB_PORT" --email "$email" --password "$password" "$PLACES"
echo "   check: $(curl -s "http://127.0.0.1:$PB_PORT$PB_PATH" | "$PYTHON" -c 'import json,sys; r=json.load(sys.stdin); print(len(r["items"]), "items, first", r["items"][0]["name_en"] if r["items"] else None)')" | tee -a "$RESULTS/search.txt"
measure_search pocketbase "$PB_PID" "http://127.0.0.1:$PB_PORT$PB_PATH"
stop_pid "$PB_PID"; trap - EXIT

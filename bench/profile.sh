#!/usr/bin/env bash
# CPU profiles (Linux perf) of the Caravan release build: the read request under wrk load, and the places import.
#
#   bench/profile.sh read     # perf record -g of `caravan serve` for 10 s under wrk -t2 -c32
#                             # (KEY=service_role_key: the same read with the service_role key, no policy;
#                             #  reports then go to profile-read-service_role_key.txt)
#   bench/profile.sh import   # perf record -g of one `caravan import places` into a fresh data dir
#   bench/profile.sh write    # perf record -g of `caravan serve` for 10 s under the favorites write load
#                             # (bench/write_favorites.lua, wrk -t2 -c32), plus a per-thread CPU breakdown
#
# Reports (by library, and by symbol with callees included) go to bench/work/results/profile-*.txt.
source "$(dirname "$0")/common.sh"

PORT="${CARAVAN_PORT:-18080}"
URL="http://127.0.0.1:$PORT/rest/v1/places?category=eq.cafe&order=google_rating.desc.nullslast&limit=20"

report() {   # report DATA OUT
    set +o pipefail   # `head` closes the pipe early
    {
        echo "## by library (self time)"
        perf report -i "$1" --no-children --sort dso --stdio -g none 2>/dev/null | grep -v '^#' | grep '%' | head -12
        echo; echo "## by symbol, callees included (top 70)"
        perf report -i "$1" --children --sort symbol --stdio -g none 2>/dev/null | grep -v '^#' | grep '%' | head -70 | swift demangle --simplified | cut -c1-200
    } > "$2"
    echo "wrote $2"
}

case "${1:-}" in
read)
    dir="$WORK/profile-read"
    rm -rf "$dir"
    "$CARAVAN" migrate --data-dir "$dir" > /dev/null  # only migrate and serve create a deployment
    "$CARAVAN" import places "$PLACES" --data-dir "$dir" --json > /dev/null
    key="$("$CARAVAN" keys --data-dir "$dir" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "${KEY:-anon_key}")"
    suffix="${KEY:+-$KEY}"
    "$CARAVAN" serve --data-dir "$dir" --port "$PORT" --log-level warning > /dev/null 2>&1 &
    pid=$!
    trap 'stop_pid $pid' EXIT
    wait_port "$PORT"
    wrk -t2 -c32 -d3s -H "apikey: $key" "$URL" > /dev/null
    wrk -t2 -c32 -d12s -H "apikey: $key" "$URL" > "$RESULTS/profile-read-wrk.txt" &
    wrk_pid=$!
    sleep 1
    perf record -F 999 -g -p "$pid" -o "$WORK/perf-read.data" -- sleep 10 2> /dev/null
    wait "$wrk_pid"
    stop_pid "$pid"; trap - EXIT
    echo "under perf: $(wrk_summary "$RESULTS/profile-read-wrk.txt")"
    report "$WORK/perf-read.data" "$RESULTS/profile-read$suffix.txt"
    ;;
import)
    dir="$WORK/profile-import"
    rm -rf "$dir"
    "$CARAVAN" migrate --data-dir "$dir" > /dev/null  # only migrate and serve create a deployment
    perf record -F 4999 -g -o "$WORK/perf-import.data" -- "$CARAVAN" import places "$PLACES" --data-dir "$dir" --json > /dev/null 2> /dev/null
    report "$WORK/perf-import.data" "$RESULTS/profile-import.txt"
    ;;
write)
    dir="$WORK/profile-write"
    rm -rf "$dir"; mkdir -p "$dir"
    "$CARAVAN" migrate --data-dir "$dir/data" > /dev/null  # only migrate and serve create a deployment
    "$CARAVAN" import places "$PLACES" --data-dir "$dir/data" --json > /dev/null
    ANON_KEY="$("$CARAVAN" keys --data-dir "$dir/data" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"
    export ANON_KEY WRK_THREADS
    "$ROOT/.venv/bin/python" "$BENCH_DIR/caravan_users.py" --data-dir "$dir/data" --users 100 --out "$dir/users.tsv" --places-out "$dir/places.txt" > /dev/null
    "$CARAVAN" serve --data-dir "$dir/data" --port "$PORT" --log-level warning > /dev/null 2>&1 &
    pid=$!
    trap 'stop_pid $pid' EXIT
    wait_port "$PORT"
    lua=(-s "$BENCH_DIR/write_favorites.lua" "http://127.0.0.1:$PORT/rest/v1/favorites" -- caravan "$dir/users.tsv" "$dir/places.txt")
    wrk -t2 -c32 -d5s "${lua[@]}" 0 3 > /dev/null
    wrk -t2 -c32 -d14s "${lua[@]}" 1 3 > "$RESULTS/profile-write-wrk.txt" &
    wrk_pid=$!
    sleep 2
    # Per-thread CPU over 10 s (which threads are busy: NIO event loops vs the GRDB writer queue).
    top -H -b -d 10 -n 2 -p "$pid" | awk '/^top -/ { n++ } n == 2' | sed -n '7,20p' > "$RESULTS/profile-write-threads.txt" &
    top_pid=$!
    perf record -F 999 -g -p "$pid" -o "$WORK/perf-write.data" -- sleep 10 2> /dev/null
    wait "$top_pid" "$wrk_pid"
    stop_pid "$pid"; trap - EXIT
    echo "under perf: $(wrk_summary "$RESULTS/profile-write-wrk.txt")"
    report "$WORK/perf-write.data" "$RESULTS/profile-write.txt"
    {
        echo; echo "## by thread (self time)"
        perf report -i "$WORK/perf-write.data" --no-children --sort comm --stdio -g none 2>/dev/null | grep -v '^#' | grep '%' | head -12
        echo; echo "## top -H (10 s average, %CPU of one core)"
        cat "$RESULTS/profile-write-threads.txt"
    } >> "$RESULTS/profile-write.txt"
    ;;
*) echo "usage: $0 read|import|write" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# CPU profiles (Linux perf) of the Caravan release build: the read request under wrk load, and the places import.
#
#   bench/profile.sh read     # perf record -g of `caravan serve` for 10 s under wrk -t2 -c32
#   bench/profile.sh import   # perf record -g of one `caravan import places` into a fresh data dir
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
    "$CARAVAN" import places "$PLACES" --data-dir "$dir" --json > /dev/null
    key="$("$CARAVAN" keys --data-dir "$dir" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"
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
    report "$WORK/perf-read.data" "$RESULTS/profile-read.txt"
    ;;
import)
    dir="$WORK/profile-import"
    rm -rf "$dir"
    perf record -F 4999 -g -o "$WORK/perf-import.data" -- "$CARAVAN" import places "$PLACES" --data-dir "$dir" --json > /dev/null 2> /dev/null
    report "$WORK/perf-import.data" "$RESULTS/profile-import.txt"
    ;;
*) echo "usage: $0 read|import" >&2; exit 2 ;;
esac

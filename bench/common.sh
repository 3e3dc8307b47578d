# Shared settings for the bench/ scripts. Source it; do not run it.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
WORK="$BENCH_DIR/work"                       # scratch data dirs and raw outputs (git-ignored)
RESULTS="$WORK/results"
CARAVAN="${CARAVAN:-$ROOT/.build-release/release/caravan}"
POCKETBASE="${POCKETBASE:-$BENCH_DIR/.venv/bin/pocketbase}"
PLACES="${PLACES:-/work/shared/data/riyadh/places.json}"
PYTHON="${PYTHON:-python3}"

# wrk settings, identical for every server.
WRK_THREADS=2
WRK_CONNECTIONS=32
WRK_WARMUP="${WRK_WARMUP:-5s}"
WRK_DURATION="${WRK_DURATION:-20s}"
WRK_DURATION_S="${WRK_DURATION_S:-20}"

mkdir -p "$WORK" "$RESULTS"

# wait_port PORT: wait up to 30 s for 127.0.0.1:PORT to accept connections.
wait_port() {
    for _ in $(seq 1 300); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "port $1 never opened" >&2
    return 1
}

# rss_kb PID: VmRSS in kB. hwm_kb PID: VmHWM (peak RSS) in kB.
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# stop_pid PID: terminate one server we started, and wait for it.
stop_pid() {
    # Never pid 0 or empty: `kill 0` would stop this script's whole process group.
    [[ "${1:-0}" =~ ^[1-9][0-9]*$ ]] || return 0
    kill "$1" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$1" 2>/dev/null || true
}

# wrk_summary FILE: "req/s p50 p99" from a `wrk --latency` output.
wrk_summary() {
    awk '
        /Requests\/sec:/ { rps = $2 }
        /^ +50%/ { p50 = $2 }
        /^ +99%/ { p99 = $2 }
        /Non-2xx or 3xx responses:/ { bad = $5 }
        /Socket errors:/ { err = $0 }
        END { printf "%s req/s  p50 %s  p99 %s%s%s\n", rps, p50, p99, (bad ? "  NON-2xx " bad : ""), (err ? "  " err : "") }
    ' "$1"
}

# measure NAME PID URL [wrk header args...]: 5 s warm-up, then two 20 s runs with --latency.
# VmRSS is sampled 1 s before the end of each run (under load) and right after it.
measure() {
    local name="$1" pid="$2" url="$3"; shift 3
    echo "== $name: $url" | tee -a "$RESULTS/read.txt"
    wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$WRK_WARMUP" "$@" "$url" > "$RESULTS/$name-warmup.txt"
    echo "   warm-up: $(wrk_summary "$RESULTS/$name-warmup.txt")" | tee -a "$RESULTS/read.txt"
    for run in 1 2; do
        ( sleep $((WRK_DURATION_S / 2)); top -b -n1 -w 160 | sed -n '1,15p' > "$RESULTS/$name-run$run-top.txt"   # interference check
          sleep $((WRK_DURATION_S / 2 - 1)); rss_kb "$pid" > "$RESULTS/$name-run$run-rss-under-load.txt" ) &
        local sampler=$!
        wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$WRK_DURATION" --latency "$@" "$url" > "$RESULTS/$name-run$run.txt"
        wait "$sampler"
        echo "   run $run: $(wrk_summary "$RESULTS/$name-run$run.txt")  | VmRSS under load $(mib "$(cat "$RESULTS/$name-run$run-rss-under-load.txt")") MiB, after $(mib "$(rss_kb "$pid")") MiB, VmHWM $(mib "$(hwm_kb "$pid")") MiB" | tee -a "$RESULTS/read.txt"
    done
}

# cpu_busy_pct: whole-machine CPU use (%) over one second, from /proc/stat.
cpu_busy_pct() {
    local a b
    a=($(head -1 /proc/stat)); sleep 1; b=($(head -1 /proc/stat))
    local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) total=0 i
    for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
    echo $(( total > 0 ? 100 * (total - idle) / total : 0 ))
}

# wait_quiet: the machine is shared; wait (up to 30 min) until the CPU has been < 10 % busy for 5 s in a row
# before a measurement starts, so no other job competes with the server and wrk. Logs what it waited for.
wait_quiet() {
    # QUIET_WAIT=0 measures at once (a machine that other jobs keep busy; say so beside the figures).
    [ "${QUIET_WAIT:-1}" = 0 ] && return 0
    local quiet=0 waited=0 busy
    while (( quiet < 5 )); do
        busy="$(cpu_busy_pct)"
        if (( busy < 10 )); then quiet=$((quiet + 1)); else quiet=0; waited=$((waited + 1)); fi
        if (( waited > 0 && waited % 60 == 1 && quiet == 0 )); then
            echo "   (waiting for a quiet machine: ${busy}% busy; top: $(ps -eo pcpu,comm --sort=-pcpu | sed -n 2p | xargs))" >&2
        fi
        (( waited < 1800 )) || { echo "machine never quiet" >&2; return 1; }
    done
}

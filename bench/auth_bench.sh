#!/usr/bin/env bash
# Auth benchmarks. One server at a time, loopback only, release build.
#
#   bench/auth_bench.sh signin       # password sign-ins/s: Caravan POST /auth/v1/token?grant_type=password vs
#                                    # PocketBase POST /api/collections/users/auth-with-password, both bcrypt cost 12
#   bench/auth_bench.sh refresh      # refresh-token rotations/s (Caravan; PocketBase's tokens are stateless JWTs, no peer)
#   bench/auth_bench.sh verify       # in-process token verification (caravan keys bench) and REST GET with an anon
#                                    # key vs a signed-in user's Bearer token
#   bench/auth_bench.sh all
#
# Sign-ins are bcrypt-bound (~0.2 s of CPU each at cost 12), so they run with wrk -t2 -c8: more connections only
# queue. Each measurement: 5 s warm-up, then two 20 s runs with --latency after a quiet machine (common.sh).
# Summaries go to bench/work/results/auth.txt.
source "$(dirname "$0")/common.sh"

CARAVAN_PORT="${CARAVAN_PORT:-18080}"
PB_PORT="${PB_PORT:-18090}"
AUTH_USERS="${AUTH_USERS:-40}"
LOG="$RESULTS/auth.txt"

log() { echo "$*" | tee -a "$LOG"; }

# run_wrk NAME CONNECTIONS URL [args...]: warm-up + two runs.
run_wrk() {
    local name="$1" connections="$2" url="$3"; shift 3
    log "== $name: $url (wrk -t$WRK_THREADS -c$connections)"
    wait_quiet
    wrk -t"$WRK_THREADS" -c"$connections" -d"$WRK_WARMUP" "$@" "$url" > "$RESULTS/$name-warmup.txt"
    log "   warm-up: $(wrk_summary "$RESULTS/$name-warmup.txt")"
    for run in 1 2; do
        wait_quiet
        wrk -t"$WRK_THREADS" -c"$connections" -d"$WRK_DURATION" --latency "$@" "$url" > "$RESULTS/$name-run$run.txt"
        log "   run $run: $(wrk_summary "$RESULTS/$name-run$run.txt")"
    done
}

caravan_start() {   # caravan_start DIR: fresh data dir, abuse limits out of the way; sets CARAVAN_PID, ANON_KEY, SERVICE_KEY
    local dir="$1"
    rm -rf "$dir"; mkdir -p "$dir"
    "$CARAVAN" migrate --data-dir "$dir/data" > /dev/null  # only migrate and serve create a deployment
    local keys; keys="$("$CARAVAN" keys --data-dir "$dir/data" --json)"
    ANON_KEY="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"
    SERVICE_KEY="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["service_role_key"])')"
    for action in SIGN_IN SIGN_UP OTP VERIFY REFRESH; do
        export "CARAVAN_AUTH_RATE_LIMIT_$action=1000000" "CARAVAN_AUTH_RATE_LIMIT_${action}_PER_IDENTIFIER=1000000"
    done
    "$CARAVAN" serve --data-dir "$dir/data" --port "$CARAVAN_PORT" --log-level warning > "$dir/serve.log" 2>&1 &
    CARAVAN_PID=$!
    wait_port "$CARAVAN_PORT"
}

pocketbase_start() {   # pocketbase_start DIR: fresh PocketBase with a superuser; sets PB_PID
    local parent="$1"
    local pbflags=(--dir "$parent/pb_data" --migrationsDir "$parent/pb_migrations" --automigrate=false)
    rm -rf "$parent"; mkdir -p "$parent"
    "$POCKETBASE" superuser upsert bench@example.com bench-password-123 "${pbflags[@]}" > /dev/null
    "$POCKETBASE" serve --http "127.0.0.1:$PB_PORT" "${pbflags[@]}" > "$parent/serve.log" 2>&1 &
    PB_PID=$!
    wait_port "$PB_PORT"
}

run_signin() {
    local dir="$WORK/auth-caravan"
    caravan_start "$dir"
    "$PYTHON" "$BENCH_DIR/auth_users.py" caravan-users "http://127.0.0.1:$CARAVAN_PORT" "$ANON_KEY" "$SERVICE_KEY" "$AUTH_USERS" "$dir/users.tsv"
    log "== caravan: $AUTH_USERS users, bcrypt cost $("$PYTHON" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT substr(encrypted_password, 5, 2) FROM users LIMIT 1").fetchone()[0])' "$dir/data/caravan.sqlite")"
    USERS_FILE="$dir/users.tsv" BODY_FORMAT=caravan run_wrk caravan-signin 8 "http://127.0.0.1:$CARAVAN_PORT/auth/v1/token?grant_type=password" \
        -H "apikey: $ANON_KEY" -s "$BENCH_DIR/auth_signin.lua"
    log "   server CPU time: $(awk '{ printf "%.1f s", ($14 + $15) / 100 }' "/proc/$CARAVAN_PID/stat")"
    stop_pid "$CARAVAN_PID"

    local parent="$WORK/auth-pocketbase"
    pocketbase_start "$parent"
    "$PYTHON" "$BENCH_DIR/auth_users.py" pocketbase-users "http://127.0.0.1:$PB_PORT" bench@example.com bench-password-123 "$AUTH_USERS" 12 "$parent/users.tsv" | tee -a "$LOG"
    USERS_FILE="$parent/users.tsv" BODY_FORMAT=pocketbase run_wrk pocketbase-signin 8 "http://127.0.0.1:$PB_PORT/api/collections/users/auth-with-password" \
        -s "$BENCH_DIR/auth_signin.lua"
    stop_pid "$PB_PID"
}

run_refresh() {
    # Each token is presented once (no chaining): REFRESH_SESSIONS anonymous sessions, one short run each.
    local dir="$WORK/auth-caravan-refresh" sessions="${REFRESH_SESSIONS:-40000}"
    caravan_start "$dir"
    "$PYTHON" "$BENCH_DIR/auth_users.py" caravan-sessions "http://127.0.0.1:$CARAVAN_PORT" "$ANON_KEY" "$sessions" "$dir/tokens.txt"
    log "== caravan-refresh: POST /auth/v1/token?grant_type=refresh_token, $sessions sessions, each token once (wrk -t2 -c32 -d3s)"
    for run in 1 2; do
        head -n $(( sessions / 2 )) "$dir/tokens.txt" > "$dir/tokens-$run.txt"
        sed -i "1,$(( sessions / 2 ))d" "$dir/tokens.txt"
        wait_quiet
        TOKENS_FILE="$dir/tokens-$run.txt" THREADS="$WRK_THREADS" wrk -t"$WRK_THREADS" -c32 -d3s --latency \
            -H "apikey: $ANON_KEY" -s "$BENCH_DIR/auth_refresh.lua" "http://127.0.0.1:$CARAVAN_PORT/auth/v1/token?grant_type=refresh_token" > "$RESULTS/caravan-refresh-run$run.txt"
        log "   run $run: $(wrk_summary "$RESULTS/caravan-refresh-run$run.txt")"
    done
    log "   refresh tokens stored: $("$PYTHON" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*), sum(revoked) FROM auth_refresh_tokens").fetchone())' "$dir/data/caravan.sqlite") (count, revoked)"
    stop_pid "$CARAVAN_PID"
}

run_verify() {
    log "== in-process token verification (caravan keys bench --samples 20000)"
    for run in 1 2; do
        wait_quiet
        log "   run $run: $("$CARAVAN" keys bench --samples 20000)"
    done
    local dir="$WORK/auth-caravan-verify"
    caravan_start "$dir"
    "$CARAVAN" import places "$PLACES" --data-dir "$dir/data" --json > /dev/null
    local session token
    session="$(curl -s -X POST "http://127.0.0.1:$CARAVAN_PORT/auth/v1/signup" -H "apikey: $ANON_KEY" -H 'Content-Type: application/json' -d '{}')"
    token="$(echo "$session" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')"
    local url="http://127.0.0.1:$CARAVAN_PORT/rest/v1/places?select=id,name_ar&category=eq.cafe&limit=20"
    run_wrk rest-anon-key "$WRK_CONNECTIONS" "$url" -H "apikey: $ANON_KEY"
    run_wrk rest-user-bearer "$WRK_CONNECTIONS" "$url" -H "apikey: $ANON_KEY" -H "Authorization: Bearer $token"
    stop_pid "$CARAVAN_PID"
}

trap 'stop_pid ${CARAVAN_PID:-0} 2>/dev/null; stop_pid ${PB_PID:-0} 2>/dev/null' EXIT
log "# auth_bench $(date -u +%FT%TZ) $(git -C "$ROOT" rev-parse --short HEAD)"
case "${1:-all}" in
    signin) run_signin ;;
    refresh) run_refresh ;;
    verify) run_verify ;;
    all) run_signin; run_refresh; run_verify ;;
    *) echo "usage: $0 signin|refresh|verify|all" >&2; exit 2 ;;
esac

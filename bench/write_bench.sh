#!/usr/bin/env bash
# Authenticated writes, and the cost of policies on reads. One server at a time, loopback only.
#
#   bench/write_bench.sh caravan      # figure 1: POST /rest/v1/favorites with user tokens (fresh data dir)
#   bench/write_bench.sh pocketbase   # figure 1: POST /api/collections/favorites/records with user tokens
#   bench/write_bench.sh writes       # both, one after the other
#   bench/write_bench.sh policy       # figure 2: reads with vs without a policy (Caravan only); with
#                                     # POLICY_ORDER=reverse the no-policy request of each pair is measured first
#   bench/write_bench.sh policy-ab    # figure 2 again, alternating with/without policy run by run (A B B A …)
#   bench/write_bench.sh durability   # fsync/fdatasync calls per insert, both servers, under strace (not timed)
#
# Writes: $WRITE_USERS users; every request inserts a new (user, place) pair — bench/write_favorites.lua cuts the
# users × places pairs into disjoint ranges per wrk invocation and thread, so the warm-up and both runs never repeat
# a pair, and a repeat would show as a non-2xx response (UNIQUE (user, place) on both servers). Afterwards the
# stored rows are counted and compared with the 2xx responses wrk saw.
# Each measurement: wrk -t2 -c32 -d5s warm-up, then two runs of wrk -t2 -c32 -d20s --latency, after waiting for a
# quiet machine (common.sh wait_quiet). Summaries go to bench/work/results/write.txt, raw outputs next to it.
source "$(dirname "$0")/common.sh"

CARAVAN_PORT="${CARAVAN_PORT:-18080}"
PB_PORT="${PB_PORT:-18090}"
WRITE_USERS="${WRITE_USERS:-100}"
VENV_PYTHON="${VENV_PYTHON:-$ROOT/.venv/bin/python}"   # has PyJWT
LOG="$RESULTS/write.txt"
POLICY_ORDER="${POLICY_ORDER:-}"
export WRK_THREADS

log() { echo "$*" | tee -a "$LOG"; }
server_cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }   # utime + stime of the main process (all threads)

# measure_writes NAME PID URL MODE USERS_FILE PLACES_FILE: warm-up (pair slot 0) + runs 1, 2 (slots 1, 2).
measure_writes() {
    local name="$1" pid="$2" url="$3" mode="$4" users="$5" places="$6"
    local lua=("-s" "$BENCH_DIR/write_favorites.lua" "$url" "--" "$mode" "$users" "$places")
    log "== $name: POST $url ($(wc -l < "$users") users × $(wc -l < "$places") places)"
    wait_quiet
    wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$WRK_WARMUP" "${lua[@]}" 0 3 > "$RESULTS/$name-warmup.txt"
    log "   warm-up: $(wrk_summary "$RESULTS/$name-warmup.txt")"
    for run in 1 2; do
        wait_quiet
        ( sleep $((WRK_DURATION_S / 2)); top -b -n1 -w 160 | sed -n '1,15p' > "$RESULTS/$name-run$run-top.txt"
          sleep $((WRK_DURATION_S / 2 - 1)); rss_kb "$pid" > "$RESULTS/$name-run$run-rss-under-load.txt" ) &
        local sampler=$!
        wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$WRK_DURATION" --latency "${lua[@]}" "$run" 3 > "$RESULTS/$name-run$run.txt"
        wait "$sampler"
        log "   run $run: $(wrk_summary "$RESULTS/$name-run$run.txt")  | VmRSS under load $(mib "$(cat "$RESULTS/$name-run$run-rss-under-load.txt")") MiB"
        log "      $(grep '^pairs:' "$RESULTS/$name-run$run.txt")"
    done
}

# ok_responses FILE...: completed requests minus non-2xx, summed over wrk outputs.
ok_responses() {
    awk '/requests in/ { n += $1 } /Non-2xx or 3xx responses:/ { n -= $5 } END { print n }' "$@"
}

caravan_start() {   # caravan_start DIR: fresh dir, places imported, keys + $WRITE_USERS users; sets CARAVAN_PID, ANON_KEY, SERVICE_KEY
    local dir="$1"
    rm -rf "$dir"; mkdir -p "$dir"
    "$CARAVAN" migrate --data-dir "$dir/data" > /dev/null  # only migrate and serve create a deployment
    "$CARAVAN" import places "$PLACES" --data-dir "$dir/data" --json > /dev/null
    local keys; keys="$("$CARAVAN" keys --data-dir "$dir/data" --json)"
    ANON_KEY="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"
    SERVICE_KEY="$(echo "$keys" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["service_role_key"])')"
    export ANON_KEY
    "$VENV_PYTHON" "$BENCH_DIR/caravan_users.py" --data-dir "$dir/data" --users "$WRITE_USERS" --out "$dir/users.tsv" --places-out "$dir/places-all.txt" > /dev/null
    # The last place is kept out of the wrk pairs, for the check requests.
    head -n -1 "$dir/places-all.txt" > "$dir/places.txt"
    CHECK_PLACE="$(tail -1 "$dir/places-all.txt")"
    "$CARAVAN" serve --data-dir "$dir/data" --port "$CARAVAN_PORT" --log-level warning > "$dir/serve.log" 2>&1 &
    CARAVAN_PID=$!
    wait_port "$CARAVAN_PORT"
    sleep 2
}

caravan_rows() { "$PYTHON" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM favorites").fetchone()[0])' "$1/data/caravan.sqlite"; }

run_caravan_writes() {
    local dir="$WORK/write-caravan"
    caravan_start "$dir"
    trap 'stop_pid $CARAVAN_PID' EXIT
    local user token
    IFS=$'\t' read -r user token < "$dir/users.tsv"
    local status; status="$(curl -s -o "$dir/check.txt" -w '%{http_code}' -X POST "http://127.0.0.1:$CARAVAN_PORT/rest/v1/favorites" \
        -H "apikey: $ANON_KEY" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        -d "{\"user_id\":\"$user\",\"place_id\":\"$CHECK_PLACE\"}")"
    # The policy must refuse a row for another user (the second user, with the first user's token).
    local other; other="$(sed -n 2p "$dir/users.tsv" | cut -f1)"
    local denied; denied="$(curl -s -o "$dir/check-denied.txt" -w '%{http_code}' -X POST "http://127.0.0.1:$CARAVAN_PORT/rest/v1/favorites" \
        -H "apikey: $ANON_KEY" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        -d "{\"user_id\":\"$other\",\"place_id\":\"$CHECK_PLACE\"}")"
    log "== caravan check: own row -> $status (want 201); another user's row -> $denied (want 403) $(head -c 160 "$dir/check-denied.txt")"
    measure_writes caravan-write "$CARAVAN_PID" "http://127.0.0.1:$CARAVAN_PORT/rest/v1/favorites" caravan "$dir/users.tsv" "$dir/places.txt"
    stop_pid "$CARAVAN_PID"; trap - EXIT
    local rows ok; rows="$(caravan_rows "$dir")"; ok="$(ok_responses "$RESULTS"/caravan-write-{warmup,run1,run2}.txt)"
    log "   rows in favorites: $rows (2xx seen by wrk: $ok, +1 check row; in-flight requests at the end of a run may add up to $((3 * WRK_CONNECTIONS)))"
}

run_pocketbase_writes() {
    local parent="$WORK/write-pocketbase" email="bench@example.com" password="bench-password-123"
    local dir="$parent/pb_data"
    local pbflags=(--dir "$dir" --migrationsDir "$parent/pb_migrations" --automigrate=false)
    rm -rf "$parent"; mkdir -p "$parent"
    "$POCKETBASE" superuser upsert "$email" "$password" "${pbflags[@]}" > /dev/null
    "$POCKETBASE" serve --http "127.0.0.1:$PB_PORT" "${pbflags[@]}" > "$parent/serve.log" 2>&1 &
    PB_PID=$!
    trap 'stop_pid $PB_PID' EXIT
    wait_port "$PB_PORT"
    "$PYTHON" "$BENCH_DIR/pb_write_setup.py" --url "http://127.0.0.1:$PB_PORT" --email "$email" --password "$password" \
        --users "$WRITE_USERS" --out "$parent/users.tsv" | tee -a "$LOG"
    # Same place ids as Caravan's (places.json ids, trimmed), the last one kept for the checks.
    "$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); d=d["places"] if isinstance(d,dict) else d; print("\n".join(e["id"].strip() for e in d))' "$PLACES" > "$parent/places-all.txt"
    head -n -1 "$parent/places-all.txt" > "$parent/places.txt"
    local check_place; check_place="$(tail -1 "$parent/places-all.txt")"
    local user token other
    IFS=$'\t' read -r user token < "$parent/users.tsv"
    other="$(sed -n 2p "$parent/users.tsv" | cut -f1)"
    local url="http://127.0.0.1:$PB_PORT/api/collections/favorites/records"
    local status; status="$(curl -s -o "$parent/check.txt" -w '%{http_code}' -X POST "$url" -H "Authorization: $token" \
        -H 'Content-Type: application/json' -d "{\"user\":\"$user\",\"place\":\"$check_place\"}")"
    local denied; denied="$(curl -s -o "$parent/check-denied.txt" -w '%{http_code}' -X POST "$url" -H "Authorization: $token" \
        -H 'Content-Type: application/json' -d "{\"user\":\"$other\",\"place\":\"$check_place\"}")"
    local dup; dup="$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url" -H "Authorization: $token" \
        -H 'Content-Type: application/json' -d "{\"user\":\"$user\",\"place\":\"$check_place\"}")"
    log "== pocketbase check: own row -> $status (want 200); another user's row -> $denied (want 400); duplicate -> $dup (want 400)"
    measure_writes pocketbase-write "$PB_PID" "$url" pocketbase "$parent/users.tsv" "$parent/places.txt"
    stop_pid "$PB_PID"; trap - EXIT
    local rows ok
    rows="$("$PYTHON" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM favorites").fetchone()[0])' "$dir/data.db")"
    ok="$(ok_responses "$RESULTS"/pocketbase-write-{warmup,run1,run2}.txt)"
    log "   rows in favorites: $rows (2xx seen by wrk: $ok, +1 check row)"
}

# measure_reads NAME PID URL [curl/wrk header args...]: common.sh's measure, logged to write.txt too.
run_policy() {
    local dir="$WORK/policy-caravan"
    caravan_start "$dir"
    trap 'stop_pid $CARAVAN_PID' EXIT
    local base="http://127.0.0.1:$CARAVAN_PORT"
    local places_url="$base/rest/v1/places?category=eq.cafe&order=google_rating.desc.nullslast&limit=20"
    # (i) vs (ii): same request, anon key (policy is_active = true) vs service_role key (no policy); apikey only.
    log "== policy check, places: anon $(curl -s -H "apikey: $ANON_KEY" "$places_url" | md5sum | cut -c1-12), service_role $(curl -s -H "apikey: $SERVICE_KEY" "$places_url" | md5sum | cut -c1-12) (same body expected: every place is active)"
    places_anon() { wait_quiet; measure policy-places-anon "$CARAVAN_PID" "$places_url" -H "apikey: $ANON_KEY" | tee -a "$LOG"; }
    places_service() { wait_quiet; measure policy-places-service "$CARAVAN_PID" "$places_url" -H "apikey: $SERVICE_KEY" | tee -a "$LOG"; }
    if [ "$POLICY_ORDER" = reverse ]; then places_service; places_anon; else places_anon; places_service; fi
    # (iii): ~2000 favorites for 20 users (100 each), loaded through the API, then user vs service role.
    "$PYTHON" "$BENCH_DIR/caravan_favorites_load.py" --url "$base" --anon-key "$ANON_KEY" --users "$dir/users.tsv" \
        --places "$dir/places.txt" --count-users 20 --per-user 100 | tee -a "$LOG"
    local user token
    IFS=$'\t' read -r user token < "$dir/users.tsv"
    local fav_user="$base/rest/v1/favorites?select=*&limit=20"
    local fav_service="$base/rest/v1/favorites?select=*&user_id=eq.$user&limit=20"
    # Both send apikey + Authorization: Bearer (as supabase-js does), so both verify two JWTs; only the policy differs.
    log "== policy check, favorites: user $(curl -s -H "apikey: $ANON_KEY" -H "Authorization: Bearer $token" "$fav_user" | "$PYTHON" -c 'import json,sys; r=json.load(sys.stdin); print(len(r), "rows, user_ids", sorted({x["user_id"] for x in r}))'); same body as service_role: $( [ "$(curl -s -H "apikey: $ANON_KEY" -H "Authorization: Bearer $token" "$fav_user" | md5sum)" = "$(curl -s -H "apikey: $SERVICE_KEY" -H "Authorization: Bearer $SERVICE_KEY" "$fav_service" | md5sum)" ] && echo yes || echo NO)"
    favorites_user() { wait_quiet; measure policy-favorites-user "$CARAVAN_PID" "$fav_user" -H "apikey: $ANON_KEY" -H "Authorization: Bearer $token" | tee -a "$LOG"; }
    favorites_service() { wait_quiet; measure policy-favorites-service "$CARAVAN_PID" "$fav_service" -H "apikey: $SERVICE_KEY" -H "Authorization: Bearer $SERVICE_KEY" | tee -a "$LOG"; }
    if [ "$POLICY_ORDER" = reverse ]; then favorites_service; favorites_user; else favorites_user; favorites_service; fi
    stop_pid "$CARAVAN_PID"; trap - EXIT
}

# policy-ab: the same pairs as `policy`, alternated A B B A A B … ($POLICY_PAIRS pairs of 20 s runs, after one warm-up
# of each), so drift during the session falls on both sides alike; logs the server's CPU time per request too.
run_policy_ab() {
    local dir="$WORK/policy-ab-caravan" pairs="${POLICY_PAIRS:-3}"
    caravan_start "$dir"
    trap 'stop_pid $CARAVAN_PID' EXIT
    local base="http://127.0.0.1:$CARAVAN_PORT"
    local places_url="$base/rest/v1/places?category=eq.cafe&order=google_rating.desc.nullslast&limit=20"
    "$PYTHON" "$BENCH_DIR/caravan_favorites_load.py" --url "$base" --anon-key "$ANON_KEY" --users "$dir/users.tsv" \
        --places "$dir/places.txt" --count-users 20 --per-user 100 | tee -a "$LOG"
    local user token
    IFS=$'\t' read -r user token < "$dir/users.tsv"
    local fav_user="$base/rest/v1/favorites?select=*&limit=20"
    local fav_service="$base/rest/v1/favorites?select=*&user_id=eq.$user&limit=20"
    ab_pair() {   # ab_pair NAME_A URL_A HEADERS_A(;-separated) NAME_B URL_B HEADERS_B
        local -a ha hb
        IFS=';' read -r -a ha <<< "$3"; IFS=';' read -r -a hb <<< "$6"
        local -a wa=() wb=()
        for h in "${ha[@]}"; do wa+=(-H "$h"); done
        for h in "${hb[@]}"; do wb+=(-H "$h"); done
        wait_quiet
        wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$WRK_WARMUP" "${wa[@]}" "$2" > /dev/null
        wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$WRK_WARMUP" "${wb[@]}" "$5" > /dev/null
        one() {   # one NAME K wrk-args...: a run, with the server's CPU time per request (utime + stime, /proc)
            local name="$1" k="$2"; shift 2
            wait_quiet
            local t0; t0="$(server_cpu_ticks "$CARAVAN_PID")"
            wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$WRK_DURATION" --latency "$@" > "$RESULTS/ab-$name-$k.txt"
            local ticks=$(( $(server_cpu_ticks "$CARAVAN_PID") - t0 ))
            local n; n="$(awk '/requests in/ { print $1 }' "$RESULTS/ab-$name-$k.txt")"
            log "   pair $k  $name: $(wrk_summary "$RESULTS/ab-$name-$k.txt")  | server CPU $(awk -v t="$ticks" -v n="$n" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz / n * 1e6 }') µs/request"
        }
        for k in $(seq 1 "$pairs"); do   # A B, then B A, … (ABBA), so neither side always runs first
            if (( k % 2 )); then one "$1" "$k" "${wa[@]}" "$2"; one "$4" "$k" "${wb[@]}" "$5"
            else one "$4" "$k" "${wb[@]}" "$5"; one "$1" "$k" "${wa[@]}" "$2"; fi
        done
    }
    log "== policy-ab places: anon (policy) vs service_role (no policy), $pairs pairs"
    ab_pair places-anon "$places_url" "apikey: $ANON_KEY" places-service "$places_url" "apikey: $SERVICE_KEY"
    log "== policy-ab favorites: user (policy user_id = auth.uid()) vs service_role + user_id=eq., $pairs pairs"
    ab_pair favorites-user "$fav_user" "apikey: $ANON_KEY;Authorization: Bearer $token" \
            favorites-service "$fav_service" "apikey: $SERVICE_KEY;Authorization: Bearer $SERVICE_KEY"
    stop_pid "$CARAVAN_PID"; trap - EXIT
}

# durability: count the sync (and pwrite64) system calls each server makes per inserted row (strace slows the server; not a
# throughput figure). 4 connections, 5 s.
run_durability() {
    local dir="$WORK/durability-caravan"
    caravan_start "$dir"
    trap 'stop_pid $CARAVAN_PID' EXIT
    local before; before="$(caravan_rows "$dir")"
    strace -f -c -e trace=fsync,fdatasync,sync_file_range,msync,pwrite64 -p "$CARAVAN_PID" -o "$dir/strace.txt" &
    local st=$!; sleep 1
    wrk -t2 -c4 -d5s -s "$BENCH_DIR/write_favorites.lua" "http://127.0.0.1:$CARAVAN_PORT/rest/v1/favorites" -- caravan "$dir/users.tsv" "$dir/places.txt" 0 1 > "$dir/wrk.txt"
    sleep 1; kill -INT "$st"; wait "$st" || true
    stop_pid "$CARAVAN_PID"; trap - EXIT
    log "== durability caravan: $(( $(caravan_rows "$dir") - before )) rows inserted; syscalls: $(awk '$NF ~ /^(fsync|fdatasync|sync_file_range|msync|pwrite64)$/ {printf "%s %s  ", $NF, $4}' "$dir/strace.txt")"

    local parent="$WORK/durability-pocketbase" email="bench@example.com" password="bench-password-123"
    local pbflags=(--dir "$parent/pb_data" --migrationsDir "$parent/pb_migrations" --automigrate=false)
    rm -rf "$parent"; mkdir -p "$parent"
    "$POCKETBASE" superuser upsert "$email" "$password" "${pbflags[@]}" > /dev/null
    "$POCKETBASE" serve --http "127.0.0.1:$PB_PORT" "${pbflags[@]}" > "$parent/serve.log" 2>&1 &
    PB_PID=$!
    trap 'stop_pid $PB_PID' EXIT
    wait_port "$PB_PORT"
    "$PYTHON" "$BENCH_DIR/pb_write_setup.py" --url "http://127.0.0.1:$PB_PORT" --email "$email" --password "$password" --users 20 --out "$parent/users.tsv" > /dev/null
    "$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); d=d["places"] if isinstance(d,dict) else d; print("\n".join(e["id"].strip() for e in d))' "$PLACES" > "$parent/places.txt"
    strace -f -c -e trace=fsync,fdatasync,sync_file_range,msync,pwrite64 -p "$PB_PID" -o "$parent/strace.txt" &
    st=$!; sleep 1
    wrk -t2 -c4 -d5s -s "$BENCH_DIR/write_favorites.lua" "http://127.0.0.1:$PB_PORT/api/collections/favorites/records" -- pocketbase "$parent/users.tsv" "$parent/places.txt" 0 1 > "$parent/wrk.txt"
    sleep 1; kill -INT "$st"; wait "$st" || true
    stop_pid "$PB_PID"; trap - EXIT
    log "== durability pocketbase: $("$PYTHON" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM favorites").fetchone()[0])' "$parent/pb_data/data.db") rows inserted; syscalls: $(awk '$NF ~ /^(fsync|fdatasync|sync_file_range|msync|pwrite64)$/ {printf "%s %s  ", $NF, $4}' "$parent/strace.txt")"
}

log "# $(date -u +%FT%TZ) write_bench.sh $*${POLICY_ORDER:+ POLICY_ORDER=$POLICY_ORDER} (caravan: $CARAVAN${CARAVAN_REV:+, revision $CARAVAN_REV})"
case "${1:-writes}" in
    caravan) run_caravan_writes ;;
    pocketbase) run_pocketbase_writes ;;
    writes) run_caravan_writes; run_pocketbase_writes ;;
    policy) run_policy ;;
    policy-ab) run_policy_ab ;;
    durability) run_durability ;;
    *) echo "usage: $0 caravan|pocketbase|writes|policy|policy-ab|durability" >&2; exit 2 ;;
esac

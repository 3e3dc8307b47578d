#!/usr/bin/env bash
# Transit benchmarks (BENCHMARKS.md, "Transit"): import time and sizes, then stop search and next departures p50,
# Caravan's bundle against the straightforward raw-GTFS SQLite schema (raw_schema.py).
#   bench/transit/run.sh [FEED.zip] [DATE(YYYYMMDD)]     default: Porto Alegre EPTC, 20190417 (a Wednesday)
set -euo pipefail
cd "$(dirname "$0")/../.."
FEED=${1:-../shared/data/gtfs/porto_alegre_eptc.zip}
DATE=${2:-20190417}
WORK=bench/work/transit
mkdir -p "$WORK"
swift build -c release --product caravan --scratch-path .build-release >/dev/null
CARAVAN=.build-release/release/caravan
NAME=$(basename "$FEED" .zip)

echo "== sizes"
echo "zip bytes: $(stat -c %s "$FEED")"
python3 - "$FEED" <<'PY'
import sys, zipfile
used = {"agency.txt", "stops.txt", "routes.txt", "trips.txt", "stop_times.txt", "calendar.txt", "calendar_dates.txt", "shapes.txt"}
z = zipfile.ZipFile(sys.argv[1])
print("CSV bytes (the 8 files both schemas read):", sum(i.file_size for i in z.infolist() if i.filename.split("/")[-1] in used and not i.filename.startswith("__MACOSX")))
print("CSV bytes (whole feed):", sum(i.file_size for i in z.infolist() if not i.filename.startswith("__MACOSX")))
PY

echo "== import, 5 runs each"
for run in 1 2 3 4 5; do
    /usr/bin/time -f "caravan import gtfs: %e s wall, %M KB max RSS" "$CARAVAN" import gtfs "$FEED" --out "$WORK/$NAME.sqlite" >/dev/null
done 2>&1
for run in 1 2 3 4 5; do
    python3 bench/transit/raw_schema.py "$FEED" "$WORK/$NAME.raw.sqlite"
done
echo "bundle bytes: $(stat -c %s "$WORK/$NAME.sqlite")  raw schema bytes: $(stat -c %s "$WORK/$NAME.raw.sqlite")"

echo "== queries (in-process, 500 of each; p50/p90 in microseconds)"
"$CARAVAN" transit bench "$WORK/$NAME.sqlite" --raw "$WORK/$NAME.raw.sqlite" --date "$DATE" --samples 500
echo "-- departures at stops the feed times (the raw schema cannot answer at the others)"
"$CARAVAN" transit bench "$WORK/$NAME.sqlite" --raw "$WORK/$NAME.raw.sqlite" --date "$DATE" --samples 500 --timed-stops-only

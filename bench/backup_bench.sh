#!/usr/bin/env bash
# Backup and restore of the places deployment (SQLite): wall time of `caravan backup` and `caravan restore`,
# beside `cp` of the same database file on the same disk.
#
#   bench/backup_bench.sh        # release build (.build-release/release/caravan, or CARAVAN=…)
#
# Summaries are appended to bench/work/results/backup.txt.
source "$(dirname "$0")/common.sh"

dir="$WORK/backup-source"; restored="$WORK/backup-restored"; file="$WORK/places.caravan-backup"
rm -rf "$dir" "$restored" "$file" "$WORK/backup-cp.sqlite"
"$CARAVAN" migrate --data-dir "$dir" > /dev/null  # only migrate and serve create a deployment
"$CARAVAN" import places "$PLACES" --data-dir "$dir" --json > /dev/null
"$CARAVAN" keys --data-dir "$dir" > /dev/null
seconds() { local start end; start=$(date +%s.%N); "$@" > /dev/null; end=$(date +%s.%N); awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'; }
{
    echo "# $(date -u +%FT%TZ) backup_bench.sh ($(du -k "$dir/caravan.sqlite" | cut -f1) KiB caravan.sqlite, WAL checkpointed by the import's close)"
    echo "cp caravan.sqlite:   $(seconds cp "$dir/caravan.sqlite" "$WORK/backup-cp.sqlite") s"
    echo "caravan backup:      $(seconds "$CARAVAN" backup --data-dir "$dir" --out "$file") s ($(du -k "$file" | cut -f1) KiB)"
    echo "caravan restore:     $(seconds "$CARAVAN" restore "$file" --data-dir "$restored") s"
} | tee -a "$RESULTS/backup.txt"

#!/usr/bin/env bash
# Release build of a committed revision, outside the working tree, for benchmarking.
#
#   bench/build_snapshot.sh [REV]     # default HEAD; prints the binary path on the last line
#
# The working tree may have uncommitted edits (and another session may rebuild /work/main/.build-release while a
# benchmark runs), so the benchmarked binary is built from `git archive REV` exported to bench/work/src-snapshot
# (git-ignored), with its own scratch path there (incremental after the first build, which takes ~10 min on 2 cores).
# The exported revision is written to bench/work/src-snapshot/REVISION. Use it with CARAVAN=<printed path>.
source "$(dirname "$0")/common.sh"

rev="$(git -C "$ROOT" rev-parse --short "${1:-HEAD}")"
snap="$WORK/src-snapshot"
mkdir -p "$snap"
# Replace the sources (keep the scratch path so the build stays incremental).
find "$snap" -mindepth 1 -maxdepth 1 ! -name .build-release ! -name build.log -exec rm -rf {} +
git -C "$ROOT" archive "$rev" | tar -x -C "$snap"
cp "$ROOT/Package.resolved" "$snap/"   # git-ignored, pins the dependencies
echo "$rev" > "$snap/REVISION"
( cd "$snap" && swift build -c release --product caravan --scratch-path .build-release > build.log 2>&1 ) \
    || { tail -20 "$snap/build.log"; exit 1; }
echo "built $rev"
echo "$snap/.build-release/release/caravan"

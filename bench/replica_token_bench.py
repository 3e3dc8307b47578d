#!/usr/bin/env python3
"""The cost of read-your-writes on a read replica: a write, then at once a read of the row it wrote.

    replica_token_bench.py --url U --anon K --service K [--samples 500] [--json OUT]

Each sample POSTs one new place (service role; `X-Caravan-Consistency` comes back when the server has read
replicas) and then, at once, reads that row by id (`GET /rest/v1/places?id=eq.…`) one of three ways, in turn:

  token       anon key, sending the write's `X-Caravan-Consistency` back: the server serves it from a replica
              that has replayed the write (waiting for one, polling every 5 ms, at most `read_replica_token_wait`),
              else from the primary.
  plain       anon key, no header (anon wrote nothing: no remembered token either): the replica as it stands;
              the baseline. It may miss the row (counted as "missed").
  remembered  service role, no header: the caller's own last write through this instance is remembered
              (`RecentWrites`), so this read waits as `token` does (what supabase-js/-py get unchanged).

One loop, one request at a time, so each GET's latency is the wait plus one read. Reported per kind: the GET's
p50/p90/p99/max in ms (client-side wall clock, httpx over loopback, keep-alive), reads that did not find the row,
reads over 150 ms (a wait near the 200 ms bound), and the POSTs' p50/p99. Run it against a server with and without
`--read-replica` to see what the replica adds. The rows it writes have category `replica-bench`.
"""
from __future__ import annotations

import argparse
import json
import time
import uuid

import httpx

KINDS = ("token", "plain", "remembered")


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile of `values` (not empty)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-p * len(ordered) // 100))))
    return ordered[rank - 1]


def summary(values: list[float]) -> dict:
    return {"n": len(values), "p50": percentile(values, 50), "p90": percentile(values, 90),
            "p99": percentile(values, 99), "max": max(values), "mean": sum(values) / len(values)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--anon", required=True)
    parser.add_argument("--service", required=True)
    parser.add_argument("--samples", type=int, default=500, help="samples of each kind")
    parser.add_argument("--warmup", type=int, default=30, help="write/read pairs first, not counted")
    parser.add_argument("--json", help="write the raw latencies and the summary here")
    args = parser.parse_args()

    anon = {"apikey": args.anon}
    service = {"apikey": args.service, "Authorization": f"Bearer {args.service}"}
    gets: dict[str, list[float]] = {kind: [] for kind in KINDS}
    posts: list[float] = []
    missed = {kind: 0 for kind in KINDS}
    tokens = 0
    run = uuid.uuid4().hex[:8]

    with httpx.Client(base_url=args.url, timeout=10) as http:
        total = args.warmup + args.samples * len(KINDS)
        for i in range(total):
            counted = i >= args.warmup
            kind = KINDS[i % len(KINDS)]
            place = f"rb-{run}-{i}"
            body = {"id": place, "name_ar": "قياس", "category": "replica-bench", "category_ar": "قياس", "is_active": True}
            start = time.perf_counter()
            post = http.post("/rest/v1/places", json=body, headers={**service, "Prefer": "return=minimal"})
            post_ms = 1000 * (time.perf_counter() - start)
            if post.status_code != 201:
                raise SystemExit(f"POST {post.status_code}: {post.text[:300]}")
            token = post.headers.get("x-caravan-consistency")
            headers = service if kind == "remembered" else dict(anon)
            if kind == "token" and token is not None:
                headers["X-Caravan-Consistency"] = token
            start = time.perf_counter()
            get = http.get("/rest/v1/places", params={"id": f"eq.{place}", "select": "id,name_ar,category"}, headers=headers)
            get_ms = 1000 * (time.perf_counter() - start)
            if get.status_code != 200:
                raise SystemExit(f"GET {get.status_code}: {get.text[:300]}")
            if not counted:
                continue
            posts.append(post_ms)
            tokens += token is not None
            gets[kind].append(get_ms)
            if len(get.json()) != 1:
                missed[kind] += 1

    result = {
        "samples": args.samples,
        "writes_with_token": tokens,
        "post": summary(posts),
        "get": {kind: {**summary(gets[kind]), "missed": missed[kind], "over_150ms": sum(v > 150 for v in gets[kind])}
                for kind in KINDS},
    }
    print(f"POST (service role, {len(posts)} writes, {tokens} with a consistency token): "
          f"p50 {result['post']['p50']:.2f} ms  p99 {result['post']['p99']:.2f} ms")
    for kind in KINDS:
        s = result["get"][kind]
        print(f"GET {kind:<10} n={s['n']}: p50 {s['p50']:.2f} ms  p90 {s['p90']:.2f}  p99 {s['p99']:.2f}  max {s['max']:.2f}  "
              f"mean {s['mean']:.2f}  missed the row {s['missed']}  over 150 ms {s['over_150ms']}")
    plain = result["get"]["plain"]
    for kind in ("token", "remembered"):
        s = result["get"][kind]
        print(f"{kind} − plain: p50 {s['p50'] - plain['p50']:+.2f} ms  p99 {s['p99'] - plain['p99']:+.2f} ms")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({**result, "raw": {"post": posts, **gets}}, out)


if __name__ == "__main__":
    main()

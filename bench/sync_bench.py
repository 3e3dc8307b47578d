"""Sync benchmarks against a running `caravan serve`: initial pull, delta pulls, push vs REST POSTs.

    python bench/sync_bench.py URL ANON_KEY SERVICE_KEY [--rounds N]

Prints one JSON object. Each figure is a median of repeated runs (initial pull: 3 runs; delta: --rounds rounds of
1,000 changes in one transaction; push: 1,000 favorites in 10 batches of 100, beside 1,000 single-row REST POSTs,
3 runs each, as one signed-in user under the favorites owner policy)."""
from __future__ import annotations

import json
import statistics
import sys
import time
import uuid

import httpx


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    url, anon, service = sys.argv[1:4]
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 30
    client = httpx.Client(base_url=url, timeout=600)
    anon_headers = {"apikey": anon}
    service_headers = {"apikey": service, "Authorization": f"Bearer {service}"}

    def pull_all(cursor: str | None = None, limit: int = 10_000, headers=anon_headers, tables="places") -> tuple[str, int, int]:
        rows = pages = 0
        while True:
            params = {"tables": tables, "limit": limit}
            if cursor:
                params["cursor"] = cursor
            r = client.get("/sync/v1/pull", params=params, headers=headers)
            r.raise_for_status()
            body = r.json()
            rows += len(body["changes"])
            pages += 1
            cursor = body["cursor"]
            if not body["has_more"]:
                return cursor, rows, pages

    def pull_all_raw(limit: int = 10_000) -> tuple[str, int, int]:
        """The initial pull as bytes: the rows are counted and the cursor found without decoding each page (the
        floor it is compared with, sqlite3 -json, produces JSON and does not parse it either)."""
        cursor, rows, pages = None, 0, 0
        while True:
            params = {"tables": "places", "limit": limit}
            if cursor:
                params["cursor"] = cursor
            r = client.get("/sync/v1/pull", params=params, headers=anon_headers)
            r.raise_for_status()
            body = r.content
            rows += body.count(b'{"seq":')
            pages += 1
            tail = json.loads(b"{" + body[body.rindex(b'"cursor":'):])
            cursor = tail["cursor"]
            if not tail["has_more"]:
                return cursor, rows, pages

    # Initial pull.
    initial = []
    for _ in range(3):
        start = time.perf_counter()
        cursor, rows, pages = pull_all_raw()
        initial.append(time.perf_counter() - start)
    initial_s = statistics.median(initial)

    # Delta pulls: 1,000 changes in one transaction, then one pull from the previous cursor.
    ids = [r["id"] for r in client.get("/rest/v1/places", params={"select": "id", "order": "id", "limit": 1000}, headers=service_headers).json()]
    id_filter = "in.(" + ",".join(ids) + ")"
    delta = []
    for i in range(rounds):
        r = client.patch("/rest/v1/places", params={"id": id_filter}, json={"name_en": f"bench round {i}"}, headers=service_headers)
        r.raise_for_status()
        start = time.perf_counter()
        cursor, changed, _ = pull_all(cursor, limit=1000)
        delta.append(time.perf_counter() - start)
        assert changed == 1000, changed

    # Push vs REST: one signed-in user, favorites on 1,000 places.
    session = client.post("/auth/v1/signup", headers=anon_headers,
                          json={"email": f"bench-{uuid.uuid4().hex[:10]}@example.com", "password": "bench password 123"}).json()
    user, token = session["user"]["id"], session["access_token"]
    user_headers = {"apikey": anon, "Authorization": f"Bearer {token}"}
    places = [r["id"] for r in client.get("/rest/v1/places", params={"select": "id", "order": "id", "limit": 1000, "offset": 1000}, headers=service_headers).json()]
    push_runs, rest_runs = [], []
    for _ in range(3):
        client.delete("/rest/v1/favorites", params={"user_id": f"eq.{user}"}, headers=user_headers).raise_for_status()
        mutations = [{"id": str(uuid.uuid4()), "table": "favorites", "op": "insert", "record": {"user_id": user, "place_id": p, "note": "bench"}} for p in places]
        start = time.perf_counter()
        for b in range(0, 1000, 100):
            r = client.post("/sync/v1/push", json={"mutations": mutations[b:b + 100]}, headers=user_headers)
            r.raise_for_status()
            assert all(x["status"] == "applied" for x in r.json()["results"]), r.text[:300]
        push_runs.append(time.perf_counter() - start)
        client.delete("/rest/v1/favorites", params={"user_id": f"eq.{user}"}, headers=user_headers).raise_for_status()
        start = time.perf_counter()
        for p in places:
            client.post("/rest/v1/favorites", json={"user_id": user, "place_id": p, "note": "bench"}, headers=user_headers).raise_for_status()
        rest_runs.append(time.perf_counter() - start)

    print(json.dumps({
        "initial_pull": {"rows": rows, "pages": pages, "median_s": round(initial_s, 3), "rows_per_s": round(rows / initial_s),
                         "runs_s": [round(x, 3) for x in initial]},
        "delta_pull_1000": {"rounds": rounds, "p50_ms": round(percentile(delta, 50) * 1000, 1), "p99_ms": round(percentile(delta, 99) * 1000, 1)},
        "push_1000_in_batches_of_100": {"median_s": round(statistics.median(push_runs), 3),
                                        "mutations_per_s": round(1000 / statistics.median(push_runs))},
        "rest_post_1000": {"median_s": round(statistics.median(rest_runs), 3), "rows_per_s": round(1000 / statistics.median(rest_runs))},
    }))


if __name__ == "__main__":
    main()

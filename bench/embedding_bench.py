#!/usr/bin/env python3
"""Resource embedding read throughput: `places?select=*,reviews(*)&limit=20` with 5 reviews per place, beside the
same read without the embed, same server, same run (wrk -t2 -c32, warm-up then a measured run each, alternating).
A fresh deployment: the 5,487 real places imported, 5 signed-up users, each reviewing every place (27,435 reviews,
through REST as the service role; the place ids are read page by page, under `max_rows`). Prints JSON.

Usage: bench/embedding_bench.py CARAVAN_BIN [seconds=15] [places.json]

SQLite by default (a temporary data directory). With CARAVAN_BENCH_DATABASE_URL set to a postgres:// URL of a
running cluster (any database on it, e.g. the `postgres` maintenance database that `scripts/postgres-cluster start`
prints), the deployment lives in PostgreSQL instead: the script creates a fresh database on that cluster with psql
(`caravan_embed_bench_<pid>`), imports, migrates and serves with `--database`, and drops the database at the end.

bench/pocketbase_expand_bench.py imports `start_caravan`, `seed_reviews` and `wrk` from here.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

import httpx

RAISED_LIMITS = {f"CARAVAN_AUTH_RATE_LIMIT_{k}": "100000" for k in ["SIGN_IN", "SIGN_UP", "OTP", "VERIFY", "REFRESH"]}
DEFAULT_PLACES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../shared/data/riyadh/places.json")
REVIEWERS = 5


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wrk(url: str, key: str | None, seconds: int) -> dict:
    """wrk -t2 -c32 --latency on URL (with `apikey: KEY` when a key is given): req/s, p50, p99, non-2xx."""
    headers = ["-H", f"apikey: {key}"] if key else []
    out = subprocess.run(["wrk", "-t2", "-c32", f"-d{seconds}s", "--latency", *headers, url],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    def latency(p: str) -> float:
        value, unit = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)", out).groups()
        return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    result = {"requests_per_s": rps, "p50_ms": latency("50"), "p99_ms": latency("99"),
              "non_2xx": int(errors.group(1)) if errors else 0}
    if socket_errors:
        result["socket_errors"] = socket_errors.group(1).strip()
    return result


def wait_http(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} never answered 200")


def psql(url: str, sql: str) -> None:
    subprocess.run(["psql", url, "-qv", "ON_ERROR_STOP=1", "-c", sql], check=True, capture_output=True)


class Caravan:
    """A fresh Caravan deployment (SQLite in a temporary data directory, or a fresh PostgreSQL database created on
    the cluster of `cluster_url`) with the places imported (just migrated when `places` is None), served on a free
    loopback port. The benches share it (`storage_bench.py` subclasses it); `name` tells their scratch apart."""

    def __init__(self, binary: str, places: str | None, cluster_url: str | None = None, name: str = "embed"):
        self.binary, self.data = binary, tempfile.mkdtemp(prefix=f"caravan-{name}-bench-")
        self.server, self.database, self.cluster_url = None, None, cluster_url
        if cluster_url:
            name = f"caravan_{name}_bench_{os.getpid()}"
            psql(cluster_url, f'DROP DATABASE IF EXISTS "{name}"')
            psql(cluster_url, f'CREATE DATABASE "{name}"')
            parts = urllib.parse.urlsplit(cluster_url)
            self.database = urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))
            self.target = ["--database", self.database]
        else:
            self.target = ["--data-dir", self.data]
        self.engine = "postgresql" if cluster_url else "sqlite"
        subprocess.run([binary, "migrate", *self.target], check=True, capture_output=True)  # only migrate and serve create one
        if places:
            subprocess.run([binary, "import", "places", places, *self.target, "--json"], check=True, capture_output=True)
        keys = json.loads(subprocess.run([binary, "keys", *self.target, "--json"], check=True, capture_output=True,
                                         text=True).stdout)
        self.anon, self.service = keys["anon_key"], keys["service_role_key"]
        self.port = free_port()
        serve = [binary, "serve", *self.target, "--port", str(self.port), "--log-level", "warning"]
        if cluster_url:
            serve += ["--data-dir", self.data]
        self.server = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       env={**os.environ, **RAISED_LIMITS})
        self.url = f"http://127.0.0.1:{self.port}"
        wait_http(f"{self.url}/health")

    def admin(self) -> dict:
        return {"apikey": self.service, "Authorization": f"Bearer {self.service}"}

    def read_all(self, table: str, select: str = "*", page: int = 1000) -> list:
        """Every row of TABLE as the service role, ordered by id, page by page (reads are capped at max_rows)."""
        rows = []
        while True:
            r = httpx.get(f"{self.url}/rest/v1/{table}?select={select}&order=id&limit={page}&offset={len(rows)}",
                          headers=self.admin(), timeout=60)
            r.raise_for_status()
            rows += r.json()
            if len(r.json()) < page:
                return rows

    def close(self) -> None:
        if self.server:
            self.server.terminate()
            self.server.wait(timeout=30)
        if self.database:
            psql(self.cluster_url, f'DROP DATABASE IF EXISTS "{self.database.rsplit("/", 1)[1].split("?")[0]}"')
        shutil.rmtree(self.data, ignore_errors=True)


def seed_reviews(caravan: Caravan) -> tuple[int, int]:
    """5 users signed up through /auth/v1, each reviewing every place (through REST as the service role, 1,000 rows a
    request). Returns (places, reviews)."""
    ids = [p["id"] for p in caravan.read_all("places", "id")]
    users = []
    for i in range(REVIEWERS):
        body = httpx.post(f"{caravan.url}/auth/v1/signup", headers={"apikey": caravan.anon},
                          json={"email": f"reviewer{i}-{os.getpid()}@example.com", "password": "bench-pass-21"}).json()
        users.append(body["user"]["id"])
    headers = {**caravan.admin(), "Prefer": "return=minimal"}
    for user_index, user in enumerate(users):
        for start in range(0, len(ids), 1000):
            batch = [{"user_id": user, "place_id": pid, "rating": 1 + (hash((user_index, pid)) % 5), "text_ar": "مراجعة"}
                     for pid in ids[start:start + 1000]]
            r = httpx.post(f"{caravan.url}/rest/v1/reviews", headers=headers, json=batch, timeout=120)
            r.raise_for_status()
    count = httpx.get(f"{caravan.url}/rest/v1/reviews?select=id&limit=1", timeout=60,
                      headers={**caravan.admin(), "Prefer": "count=exact"}).headers.get("content-range", "")
    reviews = int(count.rsplit("/", 1)[1])
    assert reviews == len(ids) * len(users), f"{reviews} reviews for {len(ids)} places × {len(users)} users"
    return len(ids), reviews


def embedded_url(caravan: Caravan) -> str:
    return f"{caravan.url}/rest/v1/places?select=*,reviews(*)&limit=20"


def plain_url(caravan: Caravan) -> str:
    return f"{caravan.url}/rest/v1/places?select=*&limit=20"


def check_caravan(caravan: Caravan) -> None:
    r = httpx.get(embedded_url(caravan), headers={"apikey": caravan.anon})
    r.raise_for_status()
    sample = r.json()
    assert len(sample) == 20 and all(len(p["reviews"]) == REVIEWERS for p in sample), "5 reviews in each of 20 places"
    r = httpx.get(plain_url(caravan), headers={"apikey": caravan.anon})
    r.raise_for_status()
    assert len(r.json()) == 20 and "reviews" not in r.json()[0], "20 places, no embed"


def main() -> None:
    binary = sys.argv[1]
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    places = sys.argv[3] if len(sys.argv) > 3 else DEFAULT_PLACES
    caravan = Caravan(binary, places, os.environ.get("CARAVAN_BENCH_DATABASE_URL") or None)
    try:
        n_places, n_reviews = seed_reviews(caravan)
        check_caravan(caravan)
        embedded, plain = embedded_url(caravan), plain_url(caravan)
        wrk(embedded, caravan.anon, 3)
        wrk(plain, caravan.anon, 3)
        result = {
            "engine": caravan.engine, "reviews": n_reviews, "places": n_places,
            "load_average_before": os.getloadavg(),
            "embedded": wrk(embedded, caravan.anon, seconds),
            "plain": wrk(plain, caravan.anon, seconds),
            "embedded_bytes": len(httpx.get(embedded, headers={"apikey": caravan.anon}).content),
            "plain_bytes": len(httpx.get(plain, headers={"apikey": caravan.anon}).content),
            "load_average_after": os.getloadavg(),
        }
        result["ratio"] = round(result["embedded"]["requests_per_s"] / result["plain"]["requests_per_s"], 3)
        print(json.dumps(result, indent=1))
    finally:
        caravan.close()


if __name__ == "__main__":
    main()

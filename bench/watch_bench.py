"""A watching device converges on a membership change without calling sync, against a running `caravan serve` with
the group_decisions app.

    python bench/watch_bench.py URL ANON_KEY SERVICE_KEY CARAVAN_CLIENT_BIN [--rounds N]

A group holds 1,000 rows over three synced tables (100 collections, 600 collection_restaurants, 300 decisions). A
`caravan-client watch` device of a user outside the group runs throughout. Each round the user is added to the group:
the time from the add's answer until the device's own SQLite file holds all 1,000 rows (read every 5 ms, read-only);
then the user is removed: the time until the file holds none. Prints one JSON object (seconds: medians and maxima)."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import httpx
from group_rows import group_with_1000_rows

TABLES = "collections,collection_restaurants,decisions"


def main() -> None:
    url, anon, service, client_bin = sys.argv[1:5]
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 10
    http = httpx.Client(base_url=url, timeout=600)
    service_headers = {"apikey": service, "Authorization": f"Bearer {service}", "Prefer": "return=representation"}

    def app_user(user_id: str, name: str) -> None:
        http.post("/rest/v1/users", headers=service_headers, json={"id": user_id, "name": name, "username": f"{name}{uuid.uuid4().hex[:6]}"}).raise_for_status()

    r = http.post("/auth/v1/signup", headers={"apikey": anon}, json={"email": f"watchadmin-{uuid.uuid4().hex[:8]}@example.com", "password": "bench password 1"})
    r.raise_for_status()
    admin_id = r.json()["user"]["id"]
    admin = {"apikey": anon, "Authorization": f"Bearer {r.json()['access_token']}"}
    app_user(admin_id, "watchadmin")
    group = group_with_1000_rows(http, admin, admin_id, service_headers, "Watch bench")

    directory = tempfile.mkdtemp(prefix="caravan-watch-bench-")
    store = os.path.join(directory, "watcher.sqlite")
    env = {**os.environ, "CARAVAN_CLIENT_URL": url, "CARAVAN_CLIENT_APIKEY": anon, "CARAVAN_CLIENT_STORE": store}

    def client(*args: str) -> str:
        return subprocess.run([client_bin, *args], capture_output=True, text=True, env=env, check=True, timeout=300).stdout

    watcher_id = json.loads(client("sign-up", "--email", f"watcher-{uuid.uuid4().hex[:8]}@example.com", "--password", "bench password 1"))["user_id"]
    app_user(watcher_id, "watcher")
    client("sync", "--tables", TABLES, "--json")
    watcher = subprocess.Popen([client_bin, "watch", TABLES], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)

    def local_rows() -> int:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5) as db:
            return sum(db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in TABLES.split(","))

    def wait_until(condition, timeout: float = 60.0) -> float:
        started = time.perf_counter()
        while time.perf_counter() - started < timeout:
            if condition():
                return time.perf_counter() - started
            time.sleep(0.005)
        raise SystemExit("timed out: the watching device did not converge")

    joins, removals = [], []
    try:
        time.sleep(1.5)  # the watcher joins its channels
        for _ in range(rounds):
            http.post("/rest/v1/rpc/add_member", headers=admin, json={"group_id": group, "user_id": watcher_id}).raise_for_status()
            joins.append(wait_until(lambda: local_rows() == 1000))
            http.delete("/rest/v1/group_members", params={"group_id": f"eq.{group}", "user_id": f"eq.{watcher_id}"}, headers=admin).raise_for_status()
            removals.append(wait_until(lambda: local_rows() == 0))
    finally:
        watcher.send_signal(signal.SIGKILL)
        watcher.wait()
    print(json.dumps({
        "rounds": rounds, "rows_in_group": 1000,
        "join_to_local_store_p50_s": round(statistics.median(joins), 4), "join_to_local_store_max_s": round(max(joins), 4),
        "removal_to_local_store_p50_s": round(statistics.median(removals), 4), "removal_to_local_store_max_s": round(max(removals), 4),
    }))


if __name__ == "__main__":
    main()

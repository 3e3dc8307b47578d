#!/usr/bin/env python3
"""submit_vote per second under 32 concurrent voters against a live `caravan serve` (SQLite, fresh data directory),
with a reference measured in the same run, same server, same clients: each voter PATCHes its own `users` row
(a plain policy-checked REST update). 33 signed-up users share a group; the creator never votes, so the tiered
decision stays active and every vote replaces the voter's previous ballot. Prints JSON.

Usage: bench/decisions_vote_bench.py CARAVAN_BIN [seconds=20] [voters=32]
"""
import json
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone

import httpx

RAISED_LIMITS = {f"CARAVAN_AUTH_RATE_LIMIT_{k}": "100000" for k in ["SIGN_IN", "SIGN_UP", "OTP", "VERIFY", "REFRESH"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(binary: str, data: str) -> tuple[subprocess.Popen, str]:
    import os
    port = free_port()
    proc = subprocess.Popen([binary, "serve", "--data-dir", data, "--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, **RAISED_LIMITS})
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("caravan serve did not start")


def iso(seconds: int) -> str:
    return (datetime.now(timezone.utc) + timedelta(seconds=seconds)).isoformat()


def setup(url: str, anon: str, service: str, voters: int):
    def headers(token: str, key: str = anon) -> dict:
        return {"apikey": key, "Authorization": f"Bearer {token}", "Prefer": "return=representation"}
    users = []
    for i in range(voters + 1):
        body = httpx.post(f"{url}/auth/v1/signup", headers={"apikey": anon},
                          json={"email": f"voter{i}-{random.getrandbits(32):x}@example.com", "password": "bench-pass-19"}).json()
        token, uid = body["access_token"], body["user"]["id"]
        httpx.post(f"{url}/rest/v1/users", headers=headers(token), json={"id": uid, "name": f"Voter {i}"}).raise_for_status()
        users.append((token, uid))
    restaurants = httpx.post(f"{url}/rest/v1/restaurants", headers=headers(service, service),
                             json=[{"google_place_id": f"bench-{i}", "name": f"R{i}"} for i in range(20)]).json()
    creator_token, creator = users[0]
    rpc = lambda name, args: httpx.post(f"{url}/rest/v1/rpc/{name}", headers=headers(creator_token), json=args, timeout=60)
    group = rpc("create_group", {"name": "Bench"}).json()
    for _, uid in users[1:]:
        rpc("add_member", {"group_id": group, "user_id": uid}).raise_for_status()
    collection = httpx.post(f"{url}/rest/v1/collections", headers=headers(creator_token),
                            json={"name": "Spots", "type": "group", "owner_id": creator, "group_id": group}).json()[0]["id"]
    httpx.post(f"{url}/rest/v1/collection_restaurants", headers=headers(creator_token), json=[
        {"collection_id": collection, "restaurant_id": r["id"], "position": i, "group_id": group} for i, r in enumerate(restaurants)
    ]).raise_for_status()
    decision = rpc("create_decision", {"collection_id": collection, "method": "tiered", "deadline": iso(3600), "visit_date": iso(7200)})
    decision.raise_for_status()
    return users[1:], decision.json(), [r["id"] for r in restaurants]


def hammer(url: str, anon: str, users, seconds: float, request) -> dict:
    """Every user in its own thread and connection, sending `request(client, token, uid, rng)` for `seconds`."""
    latencies, errors, lock = [], [], threading.Lock()
    start_at = time.perf_counter() + 0.5
    def worker(index: int, token: str, uid: str):
        rng = random.Random(index)
        mine, failures = [], []
        with httpx.Client(base_url=url, headers={"apikey": anon, "Authorization": f"Bearer {token}"}, timeout=60) as client:
            while time.perf_counter() < start_at:
                time.sleep(0.001)
            while time.perf_counter() < start_at + seconds:
                began = time.perf_counter()
                response = request(client, uid, rng)
                mine.append(time.perf_counter() - began)
                if response.status_code >= 300:
                    failures.append(response.text[:200])
        with lock:
            latencies.extend(mine)
            errors.extend(failures)
    threads = [threading.Thread(target=worker, args=(i, t, u)) for i, (t, u) in enumerate(users)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    latencies.sort()
    return {"requests": len(latencies), "per_second": round(len(latencies) / seconds, 1), "errors": len(errors),
            "first_error": errors[0] if errors else None, "p50_ms": round(1000 * statistics.median(latencies), 1),
            "p95_ms": round(1000 * latencies[int(0.95 * (len(latencies) - 1))], 1)}


def main():
    binary = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
    voters = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    data = tempfile.mkdtemp(prefix="caravan-vote-bench-")
    proc = None
    try:
        proc, url = start(binary, data)
        keys = json.loads(subprocess.run([binary, "keys", "--data-dir", data, "--json"], capture_output=True, text=True, check=True).stdout)
        anon, service = keys["anon_key"], keys["service_role_key"]
        users, decision, candidates = setup(url, anon, service, voters)
        def vote(client, uid, rng):
            ranking = rng.sample(candidates, rng.randint(1, len(candidates)))
            return client.post("/rest/v1/rpc/submit_vote", json={"decision_id": decision, "rankings": ranking})
        def reference(client, uid, rng):
            return client.patch(f"/rest/v1/users?id=eq.{uid}", json={"city": f"City {rng.random():.6f}"})
        votes = hammer(url, anon, users, seconds, vote)
        plain = hammer(url, anon, users, seconds, reference)
        status = httpx.get(f"{url}/rest/v1/decisions?id=eq.{decision}&select=status",
                           headers={"apikey": service, "Authorization": f"Bearer {service}"}).json()
        print(json.dumps({"voters": voters, "seconds": seconds, "engine": "sqlite", "submit_vote": votes,
                          "reference_patch_own_users_row": plain, "decision_status_after": status}, indent=1))
    finally:
        if proc:
            proc.terminate()
            proc.wait(timeout=30)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()

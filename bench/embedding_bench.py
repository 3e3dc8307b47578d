#!/usr/bin/env python3
"""Resource embedding read throughput: `places?select=*,reviews(*)&limit=20` with 5 reviews per place, beside the
same read without the embed, same server, same run (wrk -t2 -c32, warm-up then a measured run each, alternating).
A fresh SQLite deployment: the 5,487 real places imported, 5 signed-up users, each reviewing every place (27,435
reviews, through REST as the service role). Prints JSON.

Usage: bench/embedding_bench.py CARAVAN_BIN [seconds=15] [places.json]
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

import httpx

RAISED_LIMITS = {f"CARAVAN_AUTH_RATE_LIMIT_{k}": "100000" for k in ["SIGN_IN", "SIGN_UP", "OTP", "VERIFY", "REFRESH"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wrk(url: str, key: str, seconds: int) -> dict:
    out = subprocess.run(["wrk", "-t2", "-c32", f"-d{seconds}s", "--latency", "-H", f"apikey: {key}", url],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    def latency(p: str) -> float:
        value, unit = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)", out).groups()
        return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"requests_per_s": rps, "p50_ms": latency("50"), "p99_ms": latency("99"), "non_2xx": int(errors.group(1)) if errors else 0}


def main() -> None:
    binary = sys.argv[1]
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    places = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), "../../shared/data/riyadh/places.json")
    data = tempfile.mkdtemp(prefix="caravan-embed-bench-")
    try:
        subprocess.run([binary, "import", "places", places, "--data-dir", data, "--json"], check=True, capture_output=True)
        keys = json.loads(subprocess.run([binary, "keys", "--data-dir", data, "--json"], check=True, capture_output=True, text=True).stdout)
        anon, service = keys["anon_key"], keys["service_role_key"]
        port = free_port()
        server = subprocess.Popen([binary, "serve", "--data-dir", data, "--port", str(port), "--log-level", "warning"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **RAISED_LIMITS})
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        try:
            admin = {"apikey": service, "Authorization": f"Bearer {service}", "Prefer": "return=minimal"}
            ids = [p["id"] for p in httpx.get(f"{url}/rest/v1/places?select=id&limit=100000", headers=admin, timeout=60).json()]
            users = []
            for i in range(5):
                body = httpx.post(f"{url}/auth/v1/signup", headers={"apikey": anon},
                                  json={"email": f"reviewer{i}-{os.getpid()}@example.com", "password": "bench-pass-21"}).json()
                users.append(body["user"]["id"])
            for user_index, user in enumerate(users):
                for start in range(0, len(ids), 1000):
                    batch = [{"user_id": user, "place_id": pid, "rating": 1 + (hash((user_index, pid)) % 5), "text_ar": "مراجعة"}
                             for pid in ids[start:start + 1000]]
                    r = httpx.post(f"{url}/rest/v1/reviews", headers=admin, json=batch, timeout=120)
                    r.raise_for_status()
            embedded = f"{url}/rest/v1/places?select=*,reviews(*)&limit=20"
            plain = f"{url}/rest/v1/places?select=*&limit=20"
            sample = httpx.get(embedded, headers={"apikey": anon}).json()
            assert len(sample) == 20 and all(len(p["reviews"]) == 5 for p in sample), "5 reviews embedded in each of 20 places"
            wrk(embedded, anon, 3)
            wrk(plain, anon, 3)
            result = {
                "reviews": len(ids) * len(users), "places": len(ids),
                "embedded": wrk(embedded, anon, seconds),
                "plain": wrk(plain, anon, seconds),
                "embedded_bytes": len(httpx.get(embedded, headers={"apikey": anon}).content),
                "plain_bytes": len(httpx.get(plain, headers={"apikey": anon}).content),
            }
            result["ratio"] = round(result["embedded"]["requests_per_s"] / result["plain"]["requests_per_s"], 3)
            print(json.dumps(result, indent=1))
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Realtime fan-out and broadcast benchmarks. Loopback only; every loop is bounded in time.

    realtime_bench.py caravan    --url U --anon K --service K --users USERS.tsv --places PLACES.txt [options]
    realtime_bench.py pocketbase --url U --email E --password P --users PB_USERS.tsv --places PLACES.txt [options]
    realtime_bench.py broadcast  --url U --anon K [--samples N]

Fan-out: `--sockets` subscribers (default 1,000) spread round-robin over the users of USERS.tsv ("<id>\t<token>"
lines; 100 users → 10 sockets each), each subscribed to INSERTs on `favorites` as its user, so the owner policy
(`user_id = auth.uid()` / PocketBase `user = @request.auth.id`) lets it see its own user's rows only. Then
`--writers` concurrent loops insert favorites for random users for `--duration` seconds (service role /
superuser; `--batch` rows per request, each request one transaction: Caravan an array POST, PocketBase /api/batch). Reported: inserts/s, delivered events/s (every event received, over the write
window), events expected vs received, commit-to-receipt latency p50/p99 (receipt wall clock minus the event's
commit_timestamp / PocketBase's `created` when the collection has it; UTC, ms precision, same machine) and
send-to-receipt latency (the writer puts its send time in the row: Caravan's `note`, a suffix of PocketBase's
`place`), which both servers get alike. Subscribers run in
`--procs` processes so that the Python client is not the bottleneck.

Memory per idle socket: with --pid, the server's VmRSS before connecting and after every socket has subscribed.

Broadcast: one socket joined with broadcast.self = true sends `--samples` broadcasts one after another and times
each until its own copy comes back (round trip through the server).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import random
import statistics
import time
from datetime import datetime

import httpx
import websockets


def parse_time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "T")).timestamp()


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


# --- subscribers (run in child processes) --------------------------------------------------------------------------

async def caravan_socket(url: str, anon: str, token: str, ready, latencies: list, stop: asyncio.Event) -> None:
    async with websockets.connect(f"{url.replace('http', 'ws', 1)}/realtime/v1/websocket?apikey={anon}&vsn=1.0.0",
                                  max_queue=None, open_timeout=60, ping_interval=None) as ws:
        await ws.send(json.dumps({"topic": "realtime:favs", "event": "phx_join", "ref": "1", "payload": {
            "config": {"postgres_changes": [{"event": "INSERT", "schema": "public", "table": "favorites"}]}, "access_token": token}}))
        reply = json.loads(await ws.recv())
        assert reply["payload"]["status"] == "ok", reply
        ready()
        while not stop.is_set():
            try:
                text = await asyncio.wait_for(ws.recv(), 0.5)
            except asyncio.TimeoutError:
                continue
            now = time.time()
            frame = json.loads(text)
            if frame["event"] == "postgres_changes":
                data = frame["payload"]["data"]
                latencies.append((now - parse_time(data["commit_timestamp"]), now - float(data["record"]["note"])))


async def pocketbase_socket(url: str, token: str, ready, latencies: list, stop: asyncio.Event, client: httpx.AsyncClient) -> None:
    async with client.stream("GET", f"{url}/api/realtime", timeout=None) as response:
        event = None
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data = json.loads(line[5:])
                if event == "PB_CONNECT":
                    r = await client.post(f"{url}/api/realtime", headers={"Authorization": token},
                                          json={"clientId": data["clientId"], "subscriptions": ["favorites"]})
                    assert r.status_code == 204, r.text
                    ready()
                elif event == "favorites":
                    now = time.time()
                    record = data["record"]
                    committed = now - parse_time(record["created"]) if record.get("created") else float("nan")
                    latencies.append((committed, now - float(record["place"].rsplit("@", 1)[1])))
            if stop.is_set():
                return


def subscriber_process(kind: str, args: dict, tokens: list[str], ready_queue, stop_flag, results) -> None:
    async def main():
        latencies: list[float] = []
        stop = asyncio.Event()
        opened = 0

        def ready():
            nonlocal opened
            opened += 1
            if opened == len(tokens):
                ready_queue.put(len(tokens))

        async def watch_stop():
            while not stop_flag.is_set():
                await asyncio.sleep(0.1)
            stop.set()

        client = httpx.AsyncClient(limits=httpx.Limits(max_connections=None, max_keepalive_connections=None), timeout=60)
        tasks = []
        for token in tokens:
            if kind == "caravan":
                tasks.append(asyncio.create_task(caravan_socket(args["url"], args["anon"], token, ready, latencies, stop)))
            else:
                tasks.append(asyncio.create_task(pocketbase_socket(args["url"], token, ready, latencies, stop, client)))
            await asyncio.sleep(0.002)
        await watch_stop()
        await asyncio.wait(tasks, timeout=5)
        for task in tasks:
            task.cancel()
        results.put(latencies)

    asyncio.run(main())


# --- writer -------------------------------------------------------------------------------------------------------

async def write_for(kind: str, args, users: list[str], places: list[str], headers: dict) -> int:
    deadline = time.monotonic() + args.duration
    counters = {user: 0 for user in users}
    written = 0

    def row() -> dict:
        user = random.choice(users)
        place = places[counters[user] % len(places)]
        counters[user] += 1
        sent = f"{time.time():.6f}"  # the event's send time travels in the row (note / place suffix)
        if kind == "caravan":
            return {"user_id": user, "place_id": place, "note": sent}
        return {"user": user, "place": f"{place}@{sent}"}

    async def loop(client: httpx.AsyncClient):
        nonlocal written
        while time.monotonic() < deadline:
            rows = [row() for _ in range(args.batch)]
            if kind == "caravan":
                r = await client.post(f"{args.url}/rest/v1/favorites", headers=headers, json=rows if args.batch > 1 else rows[0])
            elif args.batch > 1:
                r = await client.post(f"{args.url}/api/batch", headers=headers, json={"requests": [
                    {"method": "POST", "url": "/api/collections/favorites/records", "body": body} for body in rows]})
            else:
                r = await client.post(f"{args.url}/api/collections/favorites/records", headers=headers, json=rows[0])
            assert r.status_code in (200, 201, 204), r.text
            written += len(rows)

    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=args.writers)) as client:
        await asyncio.gather(*(loop(client) for _ in range(args.writers)))
    return written


def fan_out(kind: str, args) -> None:
    rows = [line.rstrip("\n").split("\t") for line in open(args.users) if line.strip()]
    users = [r[0] for r in rows]
    tokens = [rows[i % len(rows)][1] for i in range(args.sockets)]
    places = [line.strip() for line in open(args.places) if line.strip()]
    headers: dict
    if kind == "caravan":
        headers = {"apikey": args.anon, "Authorization": f"Bearer {args.service}", "Prefer": "return=minimal"}
        sub_args = {"url": args.url, "anon": args.anon}
    else:
        auth = httpx.post(f"{args.url}/api/collections/_superusers/auth-with-password",
                          json={"identity": args.email, "password": args.password}).json()
        headers = {"Authorization": auth["token"]}
        sub_args = {"url": args.url}
        if args.batch > 1:  # PocketBase's batch API is off by default
            r = httpx.patch(f"{args.url}/api/settings", headers=headers, json={"batch": {"enabled": True, "maxRequests": max(50, args.batch)}})
            assert r.status_code == 200, r.text
    rss_before = rss_kb(args.pid) if args.pid else None
    ctx = mp.get_context("spawn")
    ready_queue, stop_flag, results = ctx.Queue(), ctx.Event(), ctx.Queue()
    shares = [tokens[i::args.procs] for i in range(args.procs)]
    processes = [ctx.Process(target=subscriber_process, args=(kind, sub_args, share, ready_queue, stop_flag, results)) for share in shares]
    for p in processes:
        p.start()
    for _ in processes:
        ready_queue.get(timeout=300)
    time.sleep(2)
    report = {"server": kind, "sockets": args.sockets, "users": len(users), "writers": args.writers, "batch": args.batch,
              "duration_s": args.duration}
    if rss_before is not None:
        rss_idle = rss_kb(args.pid)
        report["rss_before_kb"], report["rss_idle_kb"] = rss_before, rss_idle
        report["kb_per_idle_socket"] = round((rss_idle - rss_before) / args.sockets, 1)
    start = time.monotonic()
    written = asyncio.run(write_for(kind, args, users, places, headers))
    elapsed = time.monotonic() - start
    time.sleep(args.drain)
    stop_flag.set()
    latencies: list[tuple[float, float]] = []
    for _ in processes:
        latencies += results.get(timeout=120)
    for p in processes:
        p.join(timeout=30)
    per_user = args.sockets // len(users)
    report.update({
        "inserts": written, "inserts_per_s": round(written / elapsed), "events_expected": written * per_user,
        "events_received": len(latencies), "delivered_events_per_s": round(len(latencies) / elapsed),
        "commit_to_receipt_p50_ms": ms(percentile([c for c, _ in latencies if c == c], 50)),
        "commit_to_receipt_p99_ms": ms(percentile([c for c, _ in latencies if c == c], 99)),
        "send_to_receipt_p50_ms": ms(percentile([s for _, s in latencies], 50)),
        "send_to_receipt_p99_ms": ms(percentile([s for _, s in latencies], 99)),
    })
    print(json.dumps(report))


def broadcast(args) -> None:
    async def main():
        url = f"{args.url.replace('http', 'ws', 1)}/realtime/v1/websocket?apikey={args.anon}&vsn=1.0.0"
        async with websockets.connect(url) as ws:
            await ws.send(json.dumps({"topic": "realtime:bench", "event": "phx_join", "ref": "1", "payload": {
                "config": {"broadcast": {"self": True}, "postgres_changes": []}}}))
            assert json.loads(await ws.recv())["payload"]["status"] == "ok"
            samples = []
            for n in range(args.samples):
                sent = time.perf_counter()
                await ws.send(json.dumps({"topic": "realtime:bench", "event": "broadcast", "ref": None,
                                          "payload": {"type": "broadcast", "event": "ping", "payload": {"n": n}}}))
                while True:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
                    assert frame["event"] != "system", frame
                    if frame["event"] == "broadcast" and frame["payload"]["payload"]["n"] == n:
                        break
                samples.append(time.perf_counter() - sent)
        print(json.dumps({"samples": len(samples), "p50_ms": round(statistics.median(samples) * 1000, 3),
                          "p99_ms": round(percentile(samples, 99) * 1000, 3)}))

    asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["caravan", "pocketbase", "broadcast"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--anon")
    parser.add_argument("--service")
    parser.add_argument("--email")
    parser.add_argument("--password")
    parser.add_argument("--users")
    parser.add_argument("--places")
    parser.add_argument("--sockets", type=int, default=1000)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--batch", type=int, default=1, help="rows per write request (one transaction; PocketBase: /api/batch)")
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--drain", type=float, default=3)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--pid", type=int)
    parser.add_argument("--samples", type=int, default=2000)
    args = parser.parse_args()
    if args.kind == "broadcast":
        broadcast(args)
    else:
        fan_out(args.kind, args)


if __name__ == "__main__":
    main()

"""The convergence run: real `caravan serve` processes (one on SQLite; two on one PostgreSQL database), N real
`caravan-client` processes each with its own store and user behind its own fault proxy, a seeded workload and seeded
faults; then the heal, the drain, and the checker (checker.py). See RELIABILITY.md.

    scripts/convergence --engine sqlite|postgres --clients N --seconds S --seed X [--out DIR]

The last line of output is one JSON object: operations, acknowledged, faults (and by kind), violations (each listed
above it, one JSON line starting with "violation "). Exit 0 when there are none, 1 otherwise.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
from websockets.exceptions import WebSocketException
from websockets.sync.client import connect as ws_connect

sys.path.insert(0, str(Path(__file__).resolve().parent))

from checker import check, key_text  # noqa: E402
from proxy import MODES, FaultProxy  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "convergence password 1"
CRASH_POINTS = ("before-outbox-commit", "after-outbox-commit", "during-push", "during-pull")
# The synced tables every client mirrors, with their primary keys.
KEYS = {
    "favorites": ["id"], "user_city": ["id"], "group_members": ["group_id", "user_id"], "collections": ["id"],
    "collection_restaurants": ["collection_id", "restaurant_id"], "decisions": ["id"],
    "decision_candidates": ["decision_id", "restaurant_id"], "decision_participants": ["decision_id", "user_id"],
    "votes": ["decision_id", "user_id"], "notifications": ["id"], "matches": ["id"], "conversations": ["id"],
}
TABLES = ",".join(KEYS)
# The tables whose server state the checker derives from the outboxes' applied mutations.
MODEL_TABLES = ["favorites", "user_city", "collections", "votes"]
SINGLE_WRITER = ["favorites", "user_city"]
# Columns the server stamps with its own time on a write that does not give them (GroupDecisionsBehaviours'
# `touches`): a device's insert sends the time it took on the device, a later update leaves the column to the server.
STAMPED = {"collections": ["updated_at"]}
# The tables each client's realtime subscriber listens to (postgres_changes, its user's token).
REALTIME_TABLES = ["favorites", "user_city", "collections"]
# What caravan-client says when it refuses a write on the device that the server would refuse for good.
LOCAL_REFUSAL = re.compile(r"\((checkViolation|notNullViolation|invalidValue)\)\s*$")
SERVER_ENV = {
    "CARAVAN_AUTH_RATE_LIMIT_SIGN_IN": "100000", "CARAVAN_AUTH_RATE_LIMIT_SIGN_UP": "100000",
    "CARAVAN_AUTH_RATE_LIMIT_REFRESH": "100000", "CARAVAN_AUTH_RATE_LIMIT_SIGN_IN_PER_IDENTIFIER": "100000",
    # Tokens short enough that skewed clocks and restarts meet expiry and refresh within a run.
    "CARAVAN_AUTH_JWT_EXPIRY": "300",
    # A crashing server's backtracer (full symbolication of a debug build) outlives it by many minutes holding its
    # port; the runtime's one-line crash reason still reaches the log.
    "SWIFT_BACKTRACE": "enable=no",
}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def iso(seconds_from_now: float) -> str:
    return (datetime.now(timezone.utc) + timedelta(seconds=seconds_from_now)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `caravan serve` on a fixed port, killable and restartable there."""

    def __init__(self, bin_path: Path, args: list[str], log_path: Path) -> None:
        self.bin = bin_path
        self.args = args
        self.log_path = log_path
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90) -> None:
        """Starts the server on its port; while the port is still held (a dying process's backtracer can keep it a
        while), tries again."""
        deadline = time.monotonic() + timeout
        while True:
            with open(self.log_path, "ab") as out:
                self.proc = subprocess.Popen([str(self.bin), "serve", *self.args, "--port", str(self.port)], stdout=out, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, env={**os.environ, **SERVER_ENV})
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
            if self.proc.poll() is None or time.monotonic() >= deadline:
                self.kill()
                raise RuntimeError(f"caravan serve did not answer /health in {timeout} s; log {self.log_path}")
            time.sleep(1)

    def exited(self) -> int | None:
        """The exit status of a server that ended by itself (not killed by the run), else None."""
        return self.proc.returncode if self.proc is not None and self.proc.poll() is not None else None

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)


class Deployment:
    """The servers of one engine, and direct reads of the deployment's verdict table and change log."""

    def __init__(self, engine: str, bin_path: Path, work: Path, instances: int) -> None:
        self.engine = engine
        self.work = work
        self.bin = bin_path
        self.pg_state: Path | None = None
        self.database_url: str | None = None
        if engine == "postgres":
            # A private cluster (so its restarts disturb nothing else), where the postgres user can reach it.
            self.pg_state = Path(tempfile.mkdtemp(prefix="convergence-pg-"))
            self.pg_state.chmod(0o755)
            env = {**os.environ, "CARAVAN_PG_STATE": str(self.pg_state)}
            out = subprocess.run([str(REPO / "scripts/postgres-cluster"), "start"], capture_output=True, text=True, env=env, check=True).stdout
            cluster = out.strip().split("=", 1)[1]
            import psycopg

            with psycopg.connect(cluster, autocommit=True) as admin:
                admin.execute('CREATE DATABASE "convergence"')
            self.database_url = cluster.replace("/postgres?", "/convergence?")
        self.servers: list[Server] = []
        for i in range(instances):
            data_dir = work / f"data{i}"
            data_dir.mkdir()
            args = ["--data-dir", str(data_dir)] + (["--database", self.database_url] if self.database_url else [])
            self.servers.append(Server(bin_path, args, work / f"serve{i}.log"))
        # Only `migrate` and `serve` create a deployment; `keys` refuses a directory without one.
        subprocess.run([str(bin_path), "migrate", *self.servers[0].args], capture_output=True, text=True, check=True, timeout=300)
        keys = subprocess.run([str(bin_path), "keys", *self.servers[0].args, "--json"], capture_output=True, text=True, check=True, timeout=300)
        k = json.loads(keys.stdout)
        self.anon, self.service = k["anon_key"], k["service_role_key"]

    def start(self) -> None:
        for server in self.servers:
            server.start()

    def restart_postgres(self) -> None:
        env = {**os.environ, "CARAVAN_PG_STATE": str(self.pg_state)}
        subprocess.run([str(REPO / "scripts/postgres-cluster"), "restart"], capture_output=True, text=True, env=env, check=True, timeout=120)

    def query(self, sql: str) -> list[tuple]:
        if self.database_url:
            import psycopg

            with psycopg.connect(self.database_url) as db:
                return db.execute(sql).fetchall()
        with sqlite3.connect(f"file:{self.servers[0].args[1]}/caravan.sqlite?mode=ro", uri=True, timeout=30) as db:
            return db.execute(sql).fetchall()

    def close(self) -> None:
        for server in self.servers:
            server.stop()
        if self.pg_state:
            env = {**os.environ, "CARAVAN_PG_STATE": str(self.pg_state)}
            subprocess.run([str(REPO / "scripts/postgres-cluster"), "stop"], capture_output=True, text=True, env=env, check=False, timeout=120)
            shutil.rmtree(self.pg_state, ignore_errors=True)


def rest_rows(url: str, apikey: str, token: str, table: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    order = ",".join(f"{c}.asc" for c in KEYS.get(table, ["id"]))
    while True:
        r = httpx.get(f"{url}/rest/v1/{table}", params={"order": order, "limit": 1000, "offset": len(rows)},
                      headers={"apikey": apikey, "Authorization": f"Bearer {token}"}, timeout=60)
        r.raise_for_status()
        rows += r.json()
        if len(r.json()) < 1000:
            return rows


class Client:
    """One `caravan-client` store and user, behind its own proxy; one command at a time."""

    def __init__(self, run: "Run", index: int, server: Server) -> None:
        self.run = run
        self.index = index
        self.name = f"c{index}"
        self.server = server
        self.rng = random.Random(f"{run.seed}-client-{index}")
        self.store = run.work / f"{self.name}.sqlite"
        self.email = f"conv-{run.seed}-{index}-{uuid.uuid4().hex[:6]}@example.com"
        self.user_id = ""
        self.skew = 0
        self.proxy = FaultProxy(server.port, seed=hash((run.seed, index)) & 0xFFFF)
        self.proc: subprocess.Popen | None = None
        self.proc_lock = threading.Lock()
        self.crash_next: str | None = None
        self.stopped_until = 0.0
        self.mutations: list[dict[str, Any]] = []
        self.known: set[str] = set()
        self.positions: list[int] = []
        self.reads: list[dict[str, Any]] = []
        self.operations = 0
        self.events: dict[str, int] = {}
        self.rpc_votes: set[str] = set()
        self.last_refusal: str | None = None
        self.refused_locally: list[dict[str, Any]] = []
        self.subscriber = Subscriber(self)

    def count(self, event: str) -> None:
        self.events[event] = self.events.get(event, 0) + 1

    def command(self, *args: str, timeout: float = 90, crash: str | None = None, direct: bool = False, refusal_expected: bool = False) -> tuple[int, str]:
        env = {**os.environ, "CARAVAN_CLIENT_URL": self.server.url if direct else self.proxy.url, "CARAVAN_CLIENT_APIKEY": self.run.deployment.anon,
               "CARAVAN_CLIENT_STORE": str(self.store), "CARAVAN_CLIENT_CLOCK_SKEW": str(self.skew)}
        env.pop("CARAVAN_CLIENT_CRASH_AT", None)
        if crash:
            env["CARAVAN_CLIENT_CRASH_AT"] = crash
        with self.proc_lock:
            self.proc = subprocess.Popen([str(self.run.client_bin), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            proc = self.proc
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            out, err = proc.communicate()
            self.count("command-timeout")
        with self.proc_lock:
            self.proc = None
        if proc.returncode == 4:
            self.count("exit-4-auth")
        refusal = LOCAL_REFUSAL.search(err.strip()) if proc.returncode == 1 else None
        self.last_refusal = refusal.group(1) if refusal else None
        if refusal and refusal_expected:
            pass   # a deliberately broken write refused on the device: an outcome the checker checks, not an error
        elif proc.returncode not in (0, 3, 4, -9) and args[0] != "call":
            self.count(f"exit-{proc.returncode}")
            self.run.errors.append(f"{self.name} {args[0]}: exit {proc.returncode}: {err.strip()[-300:]}")
        return proc.returncode, out

    def take_crash(self, kinds: tuple[str, ...]) -> str | None:
        if self.crash_next in kinds:
            point, self.crash_next = self.crash_next, None
            self.run.fault(f"crash-at-{point}")
            return point
        return None

    # Local store reads (the store file is SQLite in WAL mode; reading it beside the client is safe).
    def outbox(self) -> list[tuple]:
        with sqlite3.connect(f"file:{self.store}?mode=ro", uri=True, timeout=30) as db:
            return db.execute('SELECT "mutation_id", "table_name", "op", "key", "record", "state" FROM "caravan_local_outbox" ORDER BY "position"').fetchall()

    def note_mutations(self) -> None:
        for mutation_id, table, op, key, record, _ in self.outbox():
            if mutation_id not in self.known:
                self.known.add(mutation_id)
                self.mutations.append({"id": mutation_id, "table": table, "op": op, "key": json.loads(key), "record": json.loads(record) if record else None})

    def note_position(self) -> None:
        with sqlite3.connect(f"file:{self.store}?mode=ro", uri=True, timeout=30) as db:
            cursors = db.execute('SELECT "cursor" FROM "caravan_local_sync" WHERE "cursor" IS NOT NULL').fetchall()
        seqs = []
        for (cursor,) in cursors:
            fields = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
            seqs.append(fields["s"])
        if len(seqs) == 1:
            self.positions.append(seqs[0])

    def rows(self, table: str) -> list[dict[str, Any]] | None:
        code, out = self.command("rows", table, direct=True)
        return json.loads(out) if code == 0 else None

    def local(self, table: str, where: str | None = None) -> list[dict[str, Any]]:
        """Rows of the local mirror read straight from the store (for choosing the next operation)."""
        with sqlite3.connect(f"file:{self.store}?mode=ro", uri=True, timeout=30) as db:
            db.row_factory = sqlite3.Row
            return [dict(r) for r in db.execute(f'SELECT * FROM "{table}"' + (f" WHERE {where}" if where else "")).fetchall()]

    # Operations.
    def write(self, *args: str, broken: bool = False) -> None:
        """A local write; `broken`, one that breaks a declared rule (the device refuses it at once, exit 1 with the
        rule's code: recorded with what the command queued, which must be nothing)."""
        crash = None if broken else self.take_crash(("before-outbox-commit", "after-outbox-commit"))
        before = len(self.mutations)
        code, _ = self.command(*args, crash=crash, refusal_expected=broken)
        self.operations += 1
        self.count(f"{args[0]}-{args[1]}")
        self.note_mutations()
        if broken and code == 1 and self.last_refusal:
            self.count("refused-locally")
            self.refused_locally.append({"table": args[1], "op": args[0], "record": json.loads(args[-1]), "code": self.last_refusal,
                                         "queued": [m["id"] for m in self.mutations[before:]]})

    def sync(self, attempts: int = 2) -> tuple[int, dict[str, Any] | None]:
        crash = self.take_crash(("during-push", "during-pull"))
        code, out = self.command("sync", "--tables", TABLES, "--json", "--attempts", str(attempts), crash=crash)
        self.operations += 1
        self.count("sync")
        if code == 4:
            self.sign_in()
        if code != 0:
            return code, None
        self.note_position()
        report = json.loads(out)
        if self.rng.random() < 0.3 and not [m for m in self.outbox() if m[5] == "pending"]:
            after = len(self.mutations)
            for table in SINGLE_WRITER:
                rows = self.rows(table)
                if rows is not None and not [m for m in self.outbox() if m[5] == "pending"]:
                    self.reads.append({"after": after, "table": table, "rows": rows})
        return code, report

    def sign_in(self) -> None:
        code, _ = self.command("sign-in", "--email", self.email, "--password", PASSWORD)
        self.count("re-sign-in" if code == 0 else "re-sign-in-failed")

    def call(self, function: str, arguments: dict[str, Any]) -> int:
        code, _ = self.command("call", function, json.dumps(arguments))
        self.operations += 1
        self.count(f"rpc-{function}-{'ok' if code == 0 else 'offline' if code == 3 else 'refused'}")
        if code == 4:
            self.sign_in()
        return code

    def step(self) -> None:
        """One seeded operation."""
        rng, me, setup = self.rng, self.user_id, self.run.setup
        choice = rng.choices(["fav", "city", "vote", "collection", "leave", "rpc", "sync"], weights=[20, 12, 8, 8, 3, 12, 25])[0]
        if choice == "fav":
            mine = self.local("favorites")
            action = rng.random()
            if mine and action < 0.35:
                self.write("update", "favorites", json.dumps({"id": rng.choice(mine)["id"]}), json.dumps({"note": f"{self.name}-{uuid.uuid4().hex[:8]}"}))
            elif mine and action < 0.55:
                self.write("delete", "favorites", json.dumps({"id": rng.choice(mine)["id"]}))
            else:
                owner = me if rng.random() > 0.1 else rng.choice(self.run.clients).user_id   # another user's: the policy refuses
                place = rng.choice(setup["places"])                                       # a place already kept: the unique key refuses
                self.write("insert", "favorites", json.dumps({"user_id": owner, "place_id": place, "note": f"{self.name}-{uuid.uuid4().hex[:8]}"}))
        elif choice == "city":
            mine = self.local("user_city")
            action = rng.random()
            if mine and action < 0.4:
                visited = rng.random() < 0.5
                self.write("update", "user_city", json.dumps({"id": rng.choice(mine)["id"]}),
                           json.dumps({"visited": visited, "rating": round(rng.uniform(0, 10), 1) if visited else None, "notes": uuid.uuid4().hex[:8]}))
            elif mine and action < 0.6:
                self.write("delete", "user_city", json.dumps({"id": rng.choice(mine)["id"]}))
            else:
                # rating without visited breaks a check: refused.
                bad = rng.random() < 0.1
                self.write("insert", "user_city", json.dumps({"user_id": me, "city_id": rng.choice(setup["cities"]), "visited": False,
                                                              "rating": 5 if bad else None, "notes": uuid.uuid4().hex[:8]}), broken=bad)
        elif choice == "vote":
            decisions = [d for d in self.local("decision_participants", f"user_id = '{me}'")]
            if not decisions:
                return self.sync()
            decision = rng.choice(decisions)["decision_id"]
            candidates = [c["restaurant_id"] for c in self.local("decision_candidates", f"decision_id = '{decision}'")]
            rng.shuffle(candidates)
            rankings = candidates[: rng.randint(1, max(1, len(candidates)))] or setup["restaurants"][:1]
            if self.local("votes", f"decision_id = '{decision}' AND user_id = '{me}'"):
                self.write("update", "votes", json.dumps({"decision_id": decision, "user_id": me}), json.dumps({"rankings": rankings}))
            else:
                self.write("insert", "votes", json.dumps({"decision_id": decision, "user_id": me, "rankings": rankings}))
        elif choice == "collection":
            groups = [g["group_id"] for g in self.local("group_members", f"user_id = '{me}'")] or [rng.choice(setup["groups"])]
            group = rng.choice(groups)
            existing = self.local("collections", f"group_id = '{group}'")
            if existing and rng.random() < 0.5:
                self.write("update", "collections", json.dumps({"id": rng.choice(existing)["id"]}), json.dumps({"name": f"{self.name}-{uuid.uuid4().hex[:8]}"}))
            else:   # refused unless the caller administers the group
                self.write("insert", "collections", json.dumps({"name": f"{self.name}-{uuid.uuid4().hex[:8]}", "type": "group", "owner_id": me, "group_id": group}))
        elif choice == "leave":
            groups = [g for g in self.local("group_members", f"user_id = '{me}'") if g["role"] != "admin"]
            if groups:
                self.write("delete", "group_members", json.dumps({"group_id": rng.choice(groups)["group_id"], "user_id": me}))
        elif choice == "rpc":
            action = rng.random()
            if action < 0.4:
                decisions = [d["decision_id"] for d in self.local("decision_participants", f"user_id = '{me}'")]
                if decisions:
                    decision = rng.choice(decisions)
                    candidates = [c["restaurant_id"] for c in self.local("decision_candidates", f"decision_id = '{decision}'")]
                    rng.shuffle(candidates)
                    self.rpc_votes.add(key_text({"decision_id": decision, "user_id": me}))
                    self.call("submit_vote", {"decision_id": decision, "rankings": candidates[: rng.randint(1, max(1, len(candidates)))]})
            elif action < 0.7:
                other = rng.choice([c for c in self.run.clients if c is not self])
                self.call("process_swipe", {"p_swiper_id": me, "p_swiped_id": other.user_id, "p_direction": rng.choice(["left", "right", "super"])})
            else:
                # Membership churn by the admins: remove a member, add one (back).
                group = setup["admin_of"].get(self.name)
                if not group:
                    return self.sync()
                other = rng.choice([c for c in self.run.clients if c is not self])
                if rng.random() < 0.5:
                    self.call("remove_member", {"group_id": group, "user_id": other.user_id})
                else:
                    self.call("add_member", {"group_id": group, "user_id": other.user_id})
                if rng.random() < 0.2:
                    collection = setup["collection_of"][group]
                    self.call("create_decision", {"collection_id": collection, "method": "tiered", "deadline": iso(7200), "visit_date": iso(10800)})
        else:
            self.sync()


class Subscriber:
    """A client user's realtime subscriber: a raw WebSocket (Phoenix vsn 1.0.0) on the client's server, joined to
    postgres_changes of REALTIME_TABLES with the user's token; it records every change it receives, and reconnects
    (with a fresh token) whenever the socket or the channel closes — a server killed, a token expired."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.events: list[dict[str, Any]] = []
        self.joins = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        if self.thread.ident is not None:
            self.thread.join(timeout=30)

    def loop(self) -> None:
        while not self.stop.is_set():
            try:
                self.session()
            except (OSError, WebSocketException, httpx.HTTPError, TimeoutError, json.JSONDecodeError):
                pass   # the server went away or refused for now: join again
            self.stop.wait(0.5)

    def session(self) -> None:
        c = self.client
        token = c.run.token(c)
        url = c.server.url.replace("http://", "ws://") + f"/realtime/v1/websocket?apikey={c.run.deployment.anon}&vsn=1.0.0"
        with ws_connect(url, open_timeout=10, close_timeout=1) as ws:
            ws.send(json.dumps({"topic": f"realtime:convergence-{c.name}", "event": "phx_join", "ref": "1", "join_ref": "1", "payload": {
                "config": {"postgres_changes": [{"event": "*", "schema": "public", "table": t} for t in REALTIME_TABLES]}, "access_token": token}}))
            ref, beat = 1, time.monotonic()
            while not self.stop.is_set():
                if time.monotonic() - beat > 20:
                    ref += 1
                    beat = time.monotonic()
                    ws.send(json.dumps({"topic": "phoenix", "event": "heartbeat", "payload": {}, "ref": str(ref)}))
                try:
                    frame = json.loads(ws.recv(timeout=1))
                except TimeoutError:
                    continue
                event, payload = frame.get("event"), frame.get("payload") or {}
                if event == "phx_reply" and frame.get("ref") == "1":
                    if payload.get("status") != "ok":
                        return
                    self.joins += 1
                elif event in ("phx_close", "phx_error"):
                    return
                elif event == "postgres_changes":
                    data = payload.get("data") or {}
                    table = data.get("table")
                    row = data.get("old_record") if data.get("type") == "DELETE" else data.get("record")
                    key = {k: (row or {}).get(k) for k in KEYS.get(table, ["id"])}
                    self.events.append({"table": table, "key": key, "seq": data.get("seq"), "type": data.get("type")})


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.seed = args.seed
        self.rng = random.Random(f"{args.seed}-faults")
        self.work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix=f"convergence-{args.engine}-{args.seed}-"))
        self.work.mkdir(parents=True, exist_ok=True)
        self.bin = Path(args.bin).resolve()
        self.client_bin = self.bin.parent / "caravan-client"
        self.deployment = Deployment(args.engine, self.bin, self.work, 2 if args.engine == "postgres" else 1)
        self.clients: list[Client] = []
        self.setup: dict[str, Any] = {}
        self.faults: dict[str, int] = {}
        self.fault_lock = threading.Lock()
        self.errors: list[str] = []
        self.crashes: list[str] = []
        self.stop = threading.Event()

    def fault(self, kind: str) -> None:
        with self.fault_lock:
            self.faults[kind] = self.faults.get(kind, 0) + 1

    @property
    def service_headers(self) -> dict[str, str]:
        return {"apikey": self.deployment.service, "Authorization": f"Bearer {self.deployment.service}"}

    def prepare(self) -> None:
        """Reference data, users, two groups with a collection and decisions each."""
        d = self.deployment
        url = d.servers[0].url
        with httpx.Client(base_url=f"{url}/rest/v1", headers=self.service_headers, timeout=60) as s:
            places = [{"id": f"conv-place-{i:02d}", "name_ar": f"مكان {i}", "name_en": f"Place {i}", "category": "cafe", "category_ar": "مقهى"} for i in range(12)]
            assert s.post("/places", json=places).status_code == 201
            languages = [{"code": "ar", "iso639_3": "ara", "name_en": "Arabic"}, {"code": "en", "iso639_3": "eng", "name_en": "English"}]
            assert s.post("/languages", json=languages).status_code == 201
            assert s.post("/countries", json={"id": 1, "name": "Saudi Arabia", "country_code": "SA"}).status_code == 201
            cities = [{"id": 100 + i, "display_name": f"City {i}", "plain_name": f"city {i}", "country_id": 1, "latitude": 24.0 + i / 10, "longitude": 46.0}
                      for i in range(8)]
            assert s.post("/cities", json=cities).status_code == 201
            restaurants = s.post("/restaurants", json=[{"google_place_id": f"conv-{self.seed}-{i}", "name": f"R{i}"} for i in range(4)],
                                 headers={"Prefer": "return=representation"})
            assert restaurants.status_code == 201, restaurants.text
        self.setup.update(places=[p["id"] for p in places], cities=[c["id"] for c in cities], restaurants=[r["id"] for r in restaurants.json()])
        for i in range(self.args.clients):
            client = Client(self, i, d.servers[i % len(d.servers)])
            if self.args.clock_skew:
                client.skew = self.rng.randint(-240, 240)
                self.fault("clock-skew")
            code, out = client.command("sign-up", "--email", client.email, "--password", PASSWORD, direct=True)
            assert code == 0, out
            client.user_id = json.loads(out)["user_id"]
            self.clients.append(client)
        with httpx.Client(base_url=f"{url}/rest/v1", headers=self.service_headers, timeout=60) as s:
            r = s.post("/users", json=[{"id": c.user_id, "name": c.name, "username": f"{c.name}-{self.seed}-{uuid.uuid4().hex[:4]}"} for c in self.clients])
            assert r.status_code == 201, r.text
            r = s.post("/profiles", json=[{"id": c.user_id, "first_name": c.name, "native_language": "ar", "learning_languages": ["en"]} for c in self.clients])
            assert r.status_code == 201, r.text
        self.setup.update(groups=[], admin_of={}, collection_of={})
        for admin in self.clients[:2]:
            token = self.token(admin)
            h = {"apikey": d.anon, "Authorization": f"Bearer {token}"}
            group = httpx.post(f"{url}/rest/v1/rpc/create_group", json={"name": f"group of {admin.name}"}, headers=h, timeout=60).json()
            for other in self.clients:
                if other is not admin and (admin.index == 0 or other.index % 2 == 0):
                    r = httpx.post(f"{url}/rest/v1/rpc/add_member", json={"group_id": group, "user_id": other.user_id}, headers=h, timeout=60)
                    assert r.status_code in (200, 204), r.text
            r = httpx.post(f"{url}/rest/v1/collections", json={"name": f"spots of {admin.name}", "type": "group", "owner_id": admin.user_id, "group_id": group},
                           headers={**h, "Prefer": "return=representation"}, timeout=60)
            assert r.status_code == 201, r.text
            collection = r.json()[0]["id"]
            r = httpx.post(f"{url}/rest/v1/collection_restaurants", headers=h, timeout=60,
                           json=[{"collection_id": collection, "restaurant_id": rid, "position": i, "group_id": group} for i, rid in enumerate(self.setup["restaurants"])])
            assert r.status_code == 201, r.text
            for _ in range(2):
                r = httpx.post(f"{url}/rest/v1/rpc/create_decision", headers=h, timeout=60,
                               json={"collection_id": collection, "method": "tiered", "deadline": iso(7200), "visit_date": iso(10800)})
                assert r.status_code == 200, r.text
            self.setup["groups"].append(group)
            self.setup["admin_of"][admin.name] = group
            self.setup["collection_of"][group] = collection
        self.setup["initial_collections"] = [key_text({"id": c}) for c in self.setup["collection_of"].values()]
        for client in self.clients:
            code, out = client.command("sync", "--tables", TABLES, "--json", direct=True)
            assert code == 0, out
            client.note_position()

    def token(self, client: Client) -> str:
        r = httpx.post(f"{self.deployment.servers[0].url}/auth/v1/token?grant_type=password", headers={"apikey": self.deployment.anon},
                       json={"email": client.email, "password": PASSWORD}, timeout=60)
        r.raise_for_status()
        return r.json()["access_token"]

    # Faults.
    def inject(self) -> None:
        kinds = ["proxy", "client-kill", "crash-point", "client-stop", "server-kill"] + (["postgres-restart"] if self.args.engine == "postgres" else [])
        weights = [50, 12, 12, 12, 4] + ([2] if self.args.engine == "postgres" else [])
        while not self.stop.wait(self.rng.uniform(0.1, 0.6)):
            try:
                self.supervise()
                self.inject_one(kinds, weights)
            except Exception as error:   # a fault that could not be injected or healed is reported, never hidden
                self.errors.append(f"fault injection: {type(error).__name__}: {error}")

    def supervise(self) -> None:
        """Restarts a server that ended by itself (as a supervisor would), and records it."""
        for index, server in enumerate(self.deployment.servers):
            with server.lock:
                code = server.exited()
                if code is not None:
                    self.crashes.append(f"server {index} exited {code} by itself; log {server.log_path}")
                    server.start()

    def inject_one(self, kinds: list[str], weights: list[int]) -> None:
        kind = self.rng.choices(kinds, weights=weights)[0]
        client = self.rng.choice(self.clients)
        if kind == "proxy":
            mode = self.rng.choice(MODES)
            client.proxy.inject(mode, self.rng.uniform(0, 10))
            self.fault(f"proxy-{mode}")
        elif kind == "client-kill":
            with client.proc_lock:
                proc = client.proc
                if proc and proc.poll() is None:
                    proc.kill()
                    self.fault("client-sigkill")
        elif kind == "crash-point":
            client.crash_next = self.rng.choice(CRASH_POINTS)   # counted when the next command takes it
        elif kind == "client-stop":
            with client.proc_lock:
                proc = client.proc
                if proc and proc.poll() is None:
                    proc.send_signal(signal.SIGSTOP)
                    self.fault("client-sigstop")
                    threading.Timer(self.rng.uniform(0, 10), self.resume, args=(proc,)).start()
        elif kind == "server-kill":
            server = self.rng.choice(self.deployment.servers)
            with server.lock:
                server.kill()
                self.fault("server-sigkill")
                time.sleep(self.rng.uniform(0, 3))
                server.start()
        elif kind == "postgres-restart":
            self.deployment.restart_postgres()
            self.fault("postgres-restart")

    @staticmethod
    def resume(proc: subprocess.Popen) -> None:
        try:
            proc.send_signal(signal.SIGCONT)
        except ProcessLookupError:
            pass

    def drive(self, client: Client) -> None:
        while not self.stop.is_set():
            try:
                client.step()
            except Exception as error:   # a harness bug must not pass for a clean run
                self.errors.append(f"{client.name}: {type(error).__name__}: {error}")
                client.count("harness-error")
                time.sleep(0.5)

    def heal_and_drain(self) -> None:
        for client in self.clients:
            client.proxy.heal()
            client.crash_next = None
            with client.proc_lock:
                if client.proc and client.proc.poll() is None:
                    self.resume(client.proc)
        self.supervise()

        def drain(client: Client) -> None:
            started = time.monotonic()
            client.drain = {"drained": False, "seconds": 0.0, "bound": self.args.drain_bound}
            while time.monotonic() - started < self.args.drain_bound:
                code, report = client.sync(attempts=4)
                if code == 0 and report and not report["has_more"] and not [m for m in client.outbox() if m[5] == "pending"]:
                    client.drain.update(drained=True, seconds=round(time.monotonic() - started, 2))
                    return
                time.sleep(0.5)
            client.drain["seconds"] = round(time.monotonic() - started, 2)

        threads = [threading.Thread(target=drain, args=(c,)) for c in self.clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # Everyone pulls once more: the others' last pushes landed after some clients' drains.
        for client in self.clients:
            client.sync(attempts=4)
        # The subscribers stop after the last pulls, and a moment for the events still in flight.
        time.sleep(2)
        for client in self.clients:
            client.subscriber.close()

    def history(self) -> dict[str, Any]:
        d = self.deployment
        url = d.servers[0].url
        verdicts = {m: {"status": st, "seq": seq} for m, st, seq in d.query('SELECT "mutation_id", "status", "seq" FROM "caravan_sync_mutations"')}
        changes: dict[str, dict[str, list[int]]] = {t: {} for t in MODEL_TABLES}
        names = ",".join(f"'{t}'" for t in MODEL_TABLES)
        for seq, table, key in d.query(f'SELECT "seq", "table_name", "primary_key" FROM "caravan_changes" WHERE "table_name" IN ({names}) ORDER BY "seq"'):
            key = json.loads(key) if isinstance(key, str) else key
            changes[table].setdefault(key_text(key), []).append(seq)
        server = {t: rest_rows(url, d.anon, d.service, t) for t in MODEL_TABLES}
        untracked = {"collections": self.setup["initial_collections"], "votes": sorted(set().union(*(c.rpc_votes for c in self.clients)))}
        # The change-log entries of the synced tables, by transaction (one RPC, one pushed mutation, one REST write):
        # `tx_id` is the seq of the transaction's first entry, NULL on that entry itself.
        synced = ",".join(f"'{t}'" for t in KEYS)
        by_transaction: dict[Any, list[int]] = {}
        for seq, tx in d.query(f'SELECT "seq", COALESCE("tx_id", "seq") FROM "caravan_changes" WHERE "table_name" IN ({synced}) ORDER BY "seq"'):
            by_transaction.setdefault(tx, []).append(seq)
        transactions = [seqs for seqs in by_transaction.values() if len(seqs) > 1]
        def collect(c: Client) -> dict[str, Any]:
            entries = c.outbox()
            token = self.token(c)
            return {
                "name": c.name, "user_id": c.user_id, "mutations": c.mutations,
                "parked": [e[0] for e in entries if e[5] == "parked"], "pending": [e[0] for e in entries if e[5] == "pending"],
                "positions": c.positions, "reads": c.reads,
                "local": {t: c.rows(t) or [] for t in KEYS}, "rest": {t: rest_rows(c.server.url, d.anon, token, t) for t in KEYS},
                "drain": c.drain, "refused_locally": c.refused_locally, "realtime": c.subscriber.events,
            }

        with ThreadPoolExecutor(max_workers=len(self.clients)) as pool:
            clients = list(pool.map(collect, self.clients))
        return {"keys": KEYS, "single_writer": SINGLE_WRITER, "verdicts": verdicts, "server": server, "changes": changes,
                "untracked": untracked, "stamped": STAMPED, "transactions": transactions, "realtime_tables": REALTIME_TABLES,
                "clients": clients}

    def execute(self) -> dict[str, Any]:
        started = time.monotonic()
        self.deployment.start()
        self.prepare()
        log(f"{self.args.engine}: {len(self.clients)} clients, seed {self.seed}, {self.args.seconds} s; work {self.work}")
        for client in self.clients:
            client.subscriber.start()
        drivers = [threading.Thread(target=self.drive, args=(c,)) for c in self.clients]
        injector = threading.Thread(target=self.inject)
        for t in drivers + ([injector] if self.args.faults else []):
            t.start()
        time.sleep(self.args.seconds)
        self.stop.set()
        for t in drivers + ([injector] if self.args.faults else []):
            t.join()
        drain_started = time.monotonic()
        self.heal_and_drain()
        history = self.history()
        (self.work / "history.json").write_text(json.dumps(history, indent=1, default=str))
        violations = check(history)
        if self.errors:
            violations += [{"kind": "harness-error", "detail": e} for e in self.errors]
        for v in violations:
            print("violation " + json.dumps(v, ensure_ascii=False))
        ack = [m for c in self.clients for m in c.mutations if m["id"] in history["verdicts"]]
        events: dict[str, int] = {}
        for c in self.clients:
            for k, v in c.events.items():
                events[k] = events.get(k, 0) + v
        summary = {
            "engine": self.args.engine, "seed": self.seed, "clients": len(self.clients), "seconds": self.args.seconds,
            "operations": sum(c.operations for c in self.clients), "mutations": sum(len(c.mutations) for c in self.clients),
            "acknowledged": len(ack), "applied": sum(1 for m in ack if history["verdicts"][m["id"]]["status"] == "applied"),
            "rejected": sum(1 for m in ack if history["verdicts"][m["id"]]["status"] == "rejected"),
            "rpc_ok": sum(v for k, v in events.items() if k.startswith("rpc-") and k.endswith("-ok")),
            "faults": sum(self.faults.values()), "faults_by_kind": dict(sorted(self.faults.items())),
            "proxy_cuts": sum(c.proxy.cuts for c in self.clients), "events": dict(sorted(events.items())),
            "drain_bound_seconds": self.args.drain_bound, "drain_max_seconds": max(c.drain["seconds"] for c in self.clients),
            "wall_seconds": round(time.monotonic() - started, 1), "heal_seconds": round(time.monotonic() - drain_started, 1),
            "refused_locally": sum(len(c.refused_locally) for c in self.clients),
            "realtime_events": sum(len(c.subscriber.events) for c in self.clients),
            "realtime_joins": sum(c.subscriber.joins for c in self.clients),
            "transactions_multi_row": len(history["transactions"]),
            "violations": len(violations), "server_crashes": self.crashes, "work": str(self.work),
        }
        print(json.dumps(summary), flush=True)
        return summary

    def close(self) -> None:
        for c in self.clients:
            c.subscriber.close()
            c.proxy.close()
        self.deployment.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--clients", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--drain-bound", type=float, default=120, help="seconds every outbox must drain in after the heal")
    parser.add_argument("--no-faults", dest="faults", action="store_false")
    parser.add_argument("--no-clock-skew", dest="clock_skew", action="store_false")
    parser.add_argument("--bin", default=os.environ.get("CARAVAN_BIN") or str(REPO / ".build/debug/caravan"))
    parser.add_argument("--out", help="the run's directory (stores, logs, history.json); default a new temporary one")
    parser.add_argument("--seeds", help="comma-separated seeds: one run each, then a line summing them")
    args = parser.parse_args(argv)
    if args.clients < 2:
        parser.error("--clients must be at least 2")
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else [args.seed]
    summaries = []
    base = args.out
    for seed in seeds:
        args.seed = seed
        if len(seeds) > 1 and base:
            args.out = str(Path(base) / f"seed{seed}")
        run = Run(args)
        try:
            summaries.append(run.execute())
        finally:
            run.close()
    if len(seeds) > 1:
        total = {"engine": args.engine, "runs": len(summaries), "seeds": seeds, "clients": args.clients, "seconds_each": args.seconds}
        for key in ("operations", "mutations", "acknowledged", "applied", "rejected", "refused_locally", "rpc_ok", "realtime_events",
                    "faults", "violations"):
            total[key] = sum(s[key] for s in summaries)
        kinds: dict[str, int] = {}
        for s in summaries:
            for k, v in s["faults_by_kind"].items():
                kinds[k] = kinds.get(k, 0) + v
        total["faults_by_kind"] = dict(sorted(kinds.items()))
        total["drain_max_seconds"] = max(s["drain_max_seconds"] for s in summaries)
        print(json.dumps(total), flush=True)
    return 1 if any(s["violations"] for s in summaries) else 0

if __name__ == "__main__":
    sys.exit(main())

"""CaravanClient end to end: the `caravan-client` command (the SDK alone) against a real `caravan serve`.

Offline writes, a crash matrix (SIGKILL of the client at four points), a server killed mid-push, a proxy that cuts
connections at random, a policy-rejected mutation parked. After every scenario: every acknowledged local write is on
the server exactly once, the outbox is empty, and the local tables equal the server's rows visible to that user
(every column)."""
from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import threading
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import CARAVAN_BIN, _run, _start, auth_environment, serving
from deployments import new_deployment

CLIENT_BIN = CARAVAN_BIN.parent / "caravan-client"
PASSWORD = "client password 123"
PLACE_COUNT = 1200


class Backend:
    """A deployment with places, and a way to (re)start its server."""

    def __init__(self, deployment, env: dict[str, str]) -> None:
        self.deployment = deployment
        self.env = env
        keys = json.loads(_run("keys", *deployment.args, "--json").stdout)
        self.anon_key = keys["anon_key"]
        self.service_key = keys["service_role_key"]
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> None:
        self.proc, port = _start(self.deployment, self.deployment.data_dir / "client-serve.log", self.env)
        self.url = f"http://127.0.0.1:{port}"

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)
        self.proc = None

    def service(self) -> httpx.Client:
        return httpx.Client(base_url=f"{self.url}/rest/v1", headers={"apikey": self.service_key, "Authorization": f"Bearer {self.service_key}"}, timeout=60)

    def rows(self, table: str, token: str, order: str = "id") -> list[dict[str, Any]]:
        """Every row of `table` the token may read, by primary key (in pages of the server's 1,000-row cap)."""
        rows: list[dict[str, Any]] = []
        while True:
            r = httpx.get(f"{self.url}/rest/v1/{table}", params={"order": f"{order}.asc", "limit": 1000, "offset": len(rows)},
                          headers={"apikey": self.anon_key, "Authorization": f"Bearer {token}"}, timeout=60)
            assert r.status_code == 200, r.text
            rows += r.json()
            if len(r.json()) < 1000:
                return rows


@pytest.fixture(scope="module")
def backend(apple_issuer):
    if not CLIENT_BIN.is_file():
        pytest.fail(f"caravan-client not found at {CLIENT_BIN}: run `swift build`")
    deployment = new_deployment("caravan-client-")
    backend = Backend(deployment, auth_environment(apple_issuer))
    backend.start()
    try:
        places = [{"id": f"client-place-{i:04d}", "name_ar": f"مكان {i}", "name_en": f"Place {i}", "category": "cafe", "category_ar": "مقهى",
                   "is_active": i % 10 != 0} for i in range(PLACE_COUNT)]
        with backend.service() as service:
            assert service.post("/places", json=places).status_code == 201
        yield backend
    finally:
        backend.stop()
        deployment.remove()


class Client:
    """One `caravan-client` store."""

    def __init__(self, backend: Backend, tmp: Path, url: str | None = None) -> None:
        self.backend = backend
        self.store = tmp / f"client-{uuid.uuid4().hex[:8]}.sqlite"
        self.url = url
        self.token = ""
        self.user_id = ""

    def run(self, *args: str, crash_at: str | None = None, timeout: float = 300, check: bool = True) -> subprocess.CompletedProcess:
        env = {**os.environ, "CARAVAN_CLIENT_URL": self.url or self.backend.url, "CARAVAN_CLIENT_APIKEY": self.backend.anon_key,
               "CARAVAN_CLIENT_STORE": str(self.store)}
        env.pop("CARAVAN_CLIENT_CRASH_AT", None)
        if crash_at:
            env["CARAVAN_CLIENT_CRASH_AT"] = crash_at
        done = subprocess.run([str(CLIENT_BIN), *args], capture_output=True, text=True, timeout=timeout, env=env, check=False)
        if check:
            assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done

    def sign_up(self) -> None:
        email = f"client-{uuid.uuid4().hex[:10]}@example.com"
        self.user_id = json.loads(self.run("sign-up", "--email", email, "--password", PASSWORD).stdout)["user_id"]
        r = httpx.post(f"{self.backend.url}/auth/v1/token?grant_type=password", headers={"apikey": self.backend.anon_key},
                       json={"email": email, "password": PASSWORD}, timeout=60)
        self.token = r.json()["access_token"]

    def sync(self, tables: str = "places,favorites", **kwargs) -> dict[str, Any]:
        return json.loads(self.run("sync", "--tables", tables, "--json", **kwargs).stdout)

    def rows(self, table: str) -> list[dict[str, Any]]:
        return json.loads(self.run("rows", table).stdout)

    def rows_where(self, table: str, row_id: str) -> list[dict[str, Any]]:
        return json.loads(self.run("rows", table, "--where", f"id={row_id}").stdout)

    def outbox(self) -> dict[str, list[dict[str, Any]]]:
        return json.loads(self.run("outbox").stdout)

    def add_favorite(self, place: str, note: str, typed: bool = False, **kwargs) -> subprocess.CompletedProcess:
        if typed:  # the generated `Favorite` record, whose key is made by the app
            row = {"id": str(uuid.uuid4()), "user_id": self.user_id, "place_id": place, "note": note}
            return self.run("insert", "favorites", json.dumps(row), "--typed", **kwargs)
        return self.run("insert", "favorites", json.dumps({"user_id": self.user_id, "place_id": place, "note": note}), **kwargs)

    def add_favorites(self, notes: dict[str, str]) -> None:
        """One local write (and outbox entry) per favorite, in one process."""
        rows = [{"user_id": self.user_id, "place_id": place, "note": note} for place, note in notes.items()]
        assert len(json.loads(self.run("insert", "favorites", json.dumps(rows)).stdout)) == len(rows)

    def assert_converged(self) -> None:
        """The outbox is empty and the local tables equal what the server shows this user, every column."""
        assert self.outbox()["pending"] == []
        for table in ("places", "favorites"):
            server = self.backend.rows(table, self.token)
            local = self.rows(table)
            assert local == server, f"{table}: local {len(local)} rows, server {len(server)} rows"


def places(n: int, offset: int = 0) -> list[str]:
    return [f"client-place-{i:04d}" for i in range(offset, offset + n * 10) if i % 10 != 0][:n]


def test_offline_writes_reach_the_server_exactly_once(backend, tmp_path):
    client = Client(backend, tmp_path)
    client.sign_up()
    first = client.sync()
    assert first["pulled"] == sum(1 for i in range(PLACE_COUNT) if i % 10 != 0) and first["has_more"] is False
    backend.stop()
    try:
        for i, place in enumerate(places(50)[:5]):
            client.add_favorite(place, f"offline {i}")
        client.add_favorites({place: f"offline {i + 5}" for i, place in enumerate(places(50)[5:])})
        offline = client.run("sync", "--tables", "places,favorites", "--json", "--attempts", "1", check=False)
        assert offline.returncode == 3, (offline.returncode, offline.stderr)
        assert len(client.outbox()["pending"]) == 50, "local work is kept while offline"
        assert len(client.rows("favorites")) == 50
    finally:
        backend.start()
    report = client.sync()
    assert report["pushed"] == 50 and report["rejected"] == 0
    server = backend.rows("favorites", client.token)
    assert sorted(r["note"] for r in server) == sorted(f"offline {i}" for i in range(50))
    client.assert_converged()
    assert client.sync()["pushed"] == 0, "nothing is sent twice"
    assert len(backend.rows("favorites", client.token)) == 50


CRASH_POINTS = ["before-outbox-commit", "after-outbox-commit", "during-push", "during-pull"]


# The local-write points run on both APIs (the `JSONValue` one and the typed records); the sync points are the engine's.
@pytest.mark.parametrize("point,api", [(point, "json") for point in CRASH_POINTS] + [(point, "typed") for point in CRASH_POINTS[:2]])
def test_crash_matrix(backend, tmp_path, point, api):
    client = Client(backend, tmp_path)
    client.sign_up()
    client.sync()
    chosen = places(3, offset=100 + 40 * (CRASH_POINTS.index(point) + (4 if api == "typed" else 0)))
    client.add_favorite(chosen[0], "before the crash", typed=api == "typed")
    if point in ("before-outbox-commit", "after-outbox-commit"):
        killed = client.add_favorite(chosen[1], "the crashed write", typed=api == "typed", crash_at=point, check=False)
        assert killed.returncode == -signal.SIGKILL
        local = {r["note"] for r in client.rows("favorites")}
        assert ("the crashed write" in local) == (point == "after-outbox-commit"), "committed means kept; uncommitted means absent"
    else:
        client.add_favorite(chosen[1], "the crashed write")
        if point == "during-pull":
            # Something to pull: a server-side change after the push.
            with backend.service() as service:
                assert service.patch("/places", params={"id": f"eq.{chosen[2]}"}, json={"name_en": "changed on the server"}).status_code == 204
        killed = client.run("sync", "--tables", "places,favorites", "--json", crash_at=point, check=False)
        assert killed.returncode == -signal.SIGKILL
    report = client.sync()
    assert report["rejected"] == 0
    notes = sorted(r["note"] for r in backend.rows("favorites", client.token))
    expected = ["before the crash"] + (["the crashed write"] if point != "before-outbox-commit" else [])
    assert notes == sorted(expected), "every acknowledged local write on the server exactly once"
    client.assert_converged()


def test_a_rejected_mutation_is_parked_and_later_ones_go_through(backend, tmp_path):
    client = Client(backend, tmp_path)
    client.sign_up()
    client.sync()
    other = Client(backend, tmp_path)
    other.sign_up()
    chosen = places(2, offset=300)
    client.run("insert", "favorites", json.dumps({"user_id": other.user_id, "place_id": chosen[0], "note": "not mine"}))
    client.add_favorite(chosen[1], "mine")
    report = client.sync()
    assert report["pushed"] == 1 and report["rejected"] == 1
    outbox = client.outbox()
    assert outbox["pending"] == [] and len(outbox["parked"]) == 1
    assert outbox["parked"][0]["error"]["code"] == "42501"
    assert [r["note"] for r in client.rows("favorites")] == ["mine"], "the refused row is put back to the server's state (absent)"
    assert [r["note"] for r in backend.rows("favorites", client.token)] == ["mine"]
    assert client.sync()["rejected"] == 0, "a parked mutation is never retried"


def test_the_server_killed_mid_push_then_restarted(backend, tmp_path):
    client = Client(backend, tmp_path)
    client.sign_up()
    client.sync()
    client.add_favorites({place: f"kill {i}" for i, place in enumerate(places(300, offset=400))})
    done: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: done.update(result=client.run("sync", "--tables", "places,favorites", "--json", "--attempts", "1", check=False)))
    thread.start()
    deadline_rows = 0
    while deadline_rows < 20 and thread.is_alive():
        deadline_rows = len(backend.rows("favorites", client.token))
    backend.stop(signal.SIGKILL)
    thread.join(timeout=120)
    backend.start()
    assert done["result"].returncode in (0, 3)
    client.sync()
    assert sorted(r["note"] for r in backend.rows("favorites", client.token)) == sorted(f"kill {i}" for i in range(300))
    client.assert_converged()


class CuttingProxy:
    """A loopback TCP proxy that cuts a share of connections at a random point (after some bytes either way)."""

    def __init__(self, target_port: int, cut_probability: float, seed: int) -> None:
        self.target_port = target_port
        self.cut_probability = cut_probability
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.cuts = 0
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.closed = False
        self.paused = False
        self.live: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def cut_all(self) -> None:
        """Cuts every open connection and refuses new ones until `resume`."""
        with self.lock:
            self.paused = True
            live, self.live = self.live, []
        for s in live:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def resume(self) -> None:
        with self.lock:
            self.paused = False

    def _accept(self) -> None:
        while not self.closed:
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if self.paused:
                    downstream.close()
                    continue
                self.live.append(downstream)
            with self.lock:
                budget = self.rng.randint(1, 200_000) if self.rng.random() < self.cut_probability else None
            threading.Thread(target=self._serve, args=(downstream, budget), daemon=True).start()

    def _serve(self, downstream: socket.socket, budget: int | None) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.target_port))
        state = {"left": budget}

        def pump(src: socket.socket, dst: socket.socket) -> None:
            try:
                while True:
                    data = src.recv(4096)
                    if not data:
                        break
                    with self.lock:
                        if state["left"] is not None:
                            state["left"] -= len(data)
                            if state["left"] <= 0:
                                self.cuts += 1
                                raise OSError("cut")
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                for s in (src, dst):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    s.close()

        threading.Thread(target=pump, args=(downstream, upstream), daemon=True).start()
        pump(upstream, downstream)

    def close(self) -> None:
        self.closed = True
        self.listener.close()


def test_a_proxy_cutting_connections_during_a_1000_mutation_sync(backend, tmp_path):
    client = Client(backend, tmp_path)
    client.sign_up()
    client.sync()
    client.add_favorites({place: f"proxy {i}" for i, place in enumerate(places(1000))})
    proxy = CuttingProxy(int(backend.url.rsplit(":", 1)[1]), cut_probability=0.6, seed=7)
    try:
        client.url = f"http://127.0.0.1:{proxy.port}"
        for _ in range(40):
            result = client.run("sync", "--tables", "places,favorites", "--json", "--limit", "200", check=False, timeout=600)
            if result.returncode == 0 and client.outbox()["pending"] == []:
                break
            assert result.returncode in (0, 3), result.stderr
        else:
            pytest.fail("the sync never completed through the proxy")
    finally:
        proxy.close()
        client.url = None
    assert proxy.cuts > 0, "the proxy cut nothing; the test proved nothing"
    notes = sorted(r["note"] for r in backend.rows("favorites", client.token))
    assert notes == sorted(f"proxy {i}" for i in range(1000)), "every mutation exactly once"
    client.sync()
    client.assert_converged()


def _wait_for(condition, timeout: float = 30.0, what: str = "condition") -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def test_realtime_applies_server_changes_and_a_gap_is_healed_by_pull(backend, tmp_path):
    client = Client(backend, tmp_path)
    client.sign_up()
    client.sync()
    proxy = CuttingProxy(int(backend.url.rsplit(":", 1)[1]), cut_probability=0.0, seed=1)
    env = {**os.environ, "CARAVAN_CLIENT_URL": f"http://127.0.0.1:{proxy.port}", "CARAVAN_CLIENT_APIKEY": backend.anon_key,
           "CARAVAN_CLIENT_STORE": str(client.store)}
    watcher = subprocess.Popen([str(CLIENT_BIN), "watch", "places,favorites"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines: list[dict[str, Any]] = []
    threading.Thread(target=lambda: [lines.append(json.loads(line)) for line in watcher.stdout], daemon=True).start()
    place, favorite_place, gap_place = places(3, offset=900)

    def local_name(pid: str) -> Any:
        rows = client.rows_where("places", pid)
        return rows[0]["name_en"] if rows else None

    try:
        with backend.service() as service:
            # The first change may come by the join's pull or live; once it is local, the watcher is joined.
            assert service.patch("/places", params={"id": f"eq.{place}"}, json={"name_en": "first"}).status_code == 204
            _wait_for(lambda: local_name(place) == "first", what="the first change")
            assert service.patch("/places", params={"id": f"eq.{place}"}, json={"name_en": "live"}).status_code == 204
            _wait_for(lambda: local_name(place) == "live", what="a live change without a sync call")
            assert any(l["table"] == "places" and l["type"] == "UPDATE" and l["record"]["name_en"] == "live" for l in lines)
            # A favorite made by this user elsewhere arrives; another user's never does.
            r = httpx.post(f"{backend.url}/rest/v1/favorites", headers={"apikey": backend.anon_key, "Authorization": f"Bearer {client.token}"},
                           json={"user_id": client.user_id, "place_id": favorite_place, "note": "from another device"})
            assert r.status_code == 201
            _wait_for(lambda: any(r["note"] == "from another device" for r in client.rows("favorites")), what="the live favorite")
            # A forced gap: the connection is cut, a change is made while the client is away, the client comes back.
            proxy.cut_all()
            assert service.patch("/places", params={"id": f"eq.{gap_place}"}, json={"name_en": "made during the gap"}).status_code == 204
            proxy.resume()
            _wait_for(lambda: local_name(gap_place) == "made during the gap", timeout=60, what="the gap healed by a pull")
            assert not any(l["record"] and l["record"].get("name_en") == "made during the gap" for l in lines), "healed by the pull, not live"
    finally:
        watcher.send_signal(signal.SIGKILL)
        watcher.wait(timeout=30)
        proxy.close()
    client.assert_converged()


def test_tokens_are_refreshed_before_expiry_and_a_revoked_session_is_exit_4(apple_issuer, tmp_path):
    import sqlite3

    deployment = new_deployment("caravan-client-tokens-")
    backend = Backend(deployment, auth_environment(apple_issuer, CARAVAN_AUTH_JWT_EXPIRY="30"))
    backend.start()
    try:
        client = Client(backend, tmp_path)
        client.sign_up()

        def refresh_token() -> str:
            with sqlite3.connect(client.store) as db:
                return db.execute('SELECT "refresh_token" FROM "caravan_local_session"').fetchone()[0]

        first = refresh_token()
        client.sync("categories")   # 30 s tokens are inside the 60 s margin: refreshed before use
        second = refresh_token()
        assert second != first, "the refresh token rotated and the new one was kept"
        client.sync("categories")
        assert refresh_token() not in (first, second)
        assert oct(Path(client.store).stat().st_mode & 0o777) == "0o600"

        session = sqlite3.connect(client.store).execute('SELECT "access_token" FROM "caravan_local_session"').fetchone()[0]
        out = httpx.post(f"{backend.url}/auth/v1/logout?scope=global", headers={"apikey": backend.anon_key, "Authorization": f"Bearer {session}"})
        assert out.status_code == 204
        revoked = client.run("sync", "--tables", "categories", "--json", check=False)
        assert revoked.returncode == 4, (revoked.returncode, revoked.stderr)
    finally:
        backend.stop()
        deployment.remove()

"""`/sync/v1` black-box over HTTP (wire-protocol §6): pull snapshots and deltas through the caller's policies, push
with idempotent mutation ids, compaction and epochs, a server killed in the middle of a push.

Each test module gets its own deployment with the Riyadh places (the writes here would disturb the shared one)."""
from __future__ import annotations

import json
import random
import signal
import threading
import time
import uuid
from typing import Any

import httpx
import pytest

from conftest import PLACES_JSON, _run, _start, auth_environment, serving
from deployments import new_deployment

PASSWORD = "correct horse battery staple"


class SyncServer:
    def __init__(self, url: str, anon_key: str, service_key: str, deployment) -> None:
        self.url = url
        self.anon_key = anon_key
        self.service_key = service_key
        self.deployment = deployment

    def headers(self, token: str | None = None) -> dict[str, str]:
        return {"apikey": self.anon_key, "Authorization": f"Bearer {token or self.anon_key}"}

    def service_headers(self, **extra: str) -> dict[str, str]:
        return {"apikey": self.service_key, "Authorization": f"Bearer {self.service_key}", **extra}

    def pull(self, tables: str, cursor: str | None = None, limit: int | None = None, token: str | None = None) -> httpx.Response:
        params: dict[str, Any] = {"tables": tables}
        if cursor is not None:
            params["cursor"] = cursor
        if limit is not None:
            params["limit"] = limit
        return httpx.get(f"{self.url}/sync/v1/pull", params=params, headers=self.headers(token), timeout=120)

    def push(self, mutations: list[dict[str, Any]], token: str | None = None, timeout: float = 120) -> httpx.Response:
        body = {"client_id": "conformance", "mutations": mutations}
        headers = self.headers(token) if token != "service" else self.service_headers()
        return httpx.post(f"{self.url}/sync/v1/push", json=body, headers=headers, timeout=timeout)

    def sign_up(self) -> tuple[str, str]:
        r = httpx.post(f"{self.url}/auth/v1/signup", headers={"apikey": self.anon_key},
                       json={"email": f"sync-{uuid.uuid4().hex[:12]}@example.com", "password": PASSWORD}, timeout=60)
        assert r.status_code == 200, r.text
        session = r.json()
        return session["user"]["id"], session["access_token"]

    def rest_rows(self, table: str, token: str | None = None, key: str = "id") -> dict[str, dict[str, Any]]:
        """Every row of `table` the token may read, through REST, by primary key."""
        rows: dict[str, dict[str, Any]] = {}
        offset = 0
        while True:
            r = httpx.get(f"{self.url}/rest/v1/{table}", params={"order": f"{key}.asc", "limit": 1000, "offset": offset},
                          headers=self.headers(token) if token != "service" else self.service_headers(), timeout=60)
            assert r.status_code == 200, r.text
            page = r.json()
            rows.update({row[key]: row for row in page})
            if len(page) < 1000:
                return rows
            offset += 1000


def pull_all(server: SyncServer, tables: str, replica: dict[str, dict[str, Any]], cursor: str | None = None,
             limit: int | None = None, token: str | None = None) -> tuple[str, list[list[dict[str, Any]]]]:
    """Pulls until has_more is false, applying each change to `replica` (table → key JSON → record)."""
    pages = []
    while True:
        r = server.pull(tables, cursor, limit, token)
        assert r.status_code == 200, r.text
        body = r.json()
        assert set(body) == {"changes", "cursor", "has_more"}
        assert isinstance(body["cursor"], str) and body["cursor"]
        pages.append(body["changes"])
        for change in body["changes"]:
            key = json.dumps(change["key"], sort_keys=True)
            table = replica.setdefault(change["table"], {})
            if change["op"] == "upsert":
                table[key] = change["record"]
            else:
                assert change["op"] == "delete" and "record" not in change
                table.pop(key, None)
        cursor = body["cursor"]
        if not body["has_more"]:
            return cursor, pages


def by_id(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {json.loads(key)["id"]: record for key, record in rows.items()}


@pytest.fixture(scope="module")
def sync_server(places_source, apple_issuer):
    deployment = new_deployment("caravan-sync-")
    try:
        imported = _run("import", "places", str(PLACES_JSON), *deployment.args, "--json")
        assert imported.returncode == 0, imported.stderr
        keys = json.loads(_run("keys", *deployment.args, "--json").stdout)
        with serving(deployment, auth_environment(apple_issuer)) as (_, url):
            yield SyncServer(url, keys["anon_key"], keys["service_role_key"], deployment)
    finally:
        deployment.remove()


def _new_place(place_id: str) -> dict[str, Any]:
    return {"id": place_id, "name_ar": f"مكان {place_id}", "name_en": f"Place {place_id}", "category": "cafe", "category_ar": "مقهى"}


def test_snapshot_then_random_writes_converge_with_the_visible_rows(sync_server, places_source):
    replica: dict[str, dict[str, Any]] = {}
    cursor, pages = pull_all(sync_server, "places", replica, limit=1000)
    visible = sync_server.rest_rows("places")
    assert len(pages) >= 6, "5,487 places in pages of 1,000"
    assert by_id(replica["places"]) == visible
    assert len(visible) == sum(1 for p in places_source if p.get("is_active", True) is not False)

    rng = random.Random(20261124)
    ids = sorted(visible)
    deactivated: set[str] = set()
    service = httpx.Client(base_url=f"{sync_server.url}/rest/v1", headers=sync_server.service_headers(), timeout=60)
    for i in range(200):
        kind = rng.choice(["rename", "deactivate", "reactivate", "insert", "delete"])
        target = rng.choice(ids)
        if kind == "rename":
            r = service.patch("/places", params={"id": f"eq.{target}"}, json={"name_en": f"Renamed {i}", "google_rating": rng.choice([None, 3.5, 4.9])})
        elif kind == "deactivate":
            r = service.patch("/places", params={"id": f"eq.{target}"}, json={"is_active": False})
            deactivated.add(target)
        elif kind == "reactivate" and deactivated:
            back = rng.choice(sorted(deactivated))
            r = service.patch("/places", params={"id": f"eq.{back}"}, json={"is_active": True, "tags": ["back", str(i)]})
            deactivated.discard(back)
        elif kind == "insert":
            new_id = f"sync-{i}-{uuid.uuid4().hex[:6]}"
            r = service.post("/places", json=_new_place(new_id))
            ids.append(new_id)
        else:
            r = service.delete("/places", params={"id": f"eq.{target}"})
            ids.remove(target)
            deactivated.discard(target)
        assert r.status_code in (200, 201, 204), r.text

    cursor, delta_pages = pull_all(sync_server, "places", replica, cursor=cursor, limit=1000)
    changes = [c for page in delta_pages for c in page]
    assert by_id(replica["places"]) == sync_server.rest_rows("places"), "the replica equals the server's visible rows, every column"
    deleted = {c["key"]["id"] for c in changes if c["op"] == "delete"}
    assert deactivated and deactivated <= deleted, "a place set is_active=false arrives as a delete"
    assert [c["seq"] for c in changes] == sorted(c["seq"] for c in changes)
    assert all(set(c["key"]) == {"id"} for c in changes)

    up_to_date = sync_server.pull("places", cursor)
    assert up_to_date.status_code == 200 and up_to_date.json()["changes"] == [] and up_to_date.json()["has_more"] is False


def test_users_favorites_never_cross(sync_server):
    (user_a, token_a), (user_b, token_b) = sync_server.sign_up(), sync_server.sign_up()
    replicas: dict[str, dict[str, dict[str, Any]]] = {user_a: {}, user_b: {}}
    cursors = {user: pull_all(sync_server, "favorites", replicas[user], token=token)[0] for user, token in ((user_a, token_a), (user_b, token_b))}
    places = sorted(sync_server.rest_rows("places"))[:6]
    for user, token, chosen in ((user_a, token_a, places[:3]), (user_b, token_b, places[3:])):
        r = httpx.post(f"{sync_server.url}/rest/v1/favorites", headers=sync_server.headers(token),
                       json=[{"user_id": user, "place_id": p, "note": f"by {user}"} for p in chosen])
        assert r.status_code == 201, r.text
    # One of A's favorites is deleted again: A gets the delete, B nothing.
    gone = httpx.delete(f"{sync_server.url}/rest/v1/favorites", params={"place_id": f"eq.{places[0]}", "user_id": f"eq.{user_a}"},
                        headers={**sync_server.headers(token_a), "Prefer": "return=representation"})
    assert gone.status_code == 200 and len(gone.json()) == 1
    for user, token in ((user_a, token_a), (user_b, token_b)):
        _, pages = pull_all(sync_server, "favorites", replicas[user], cursor=cursors[user], token=token)
        assert all(c.get("record", {}).get("user_id", user) == user for page in pages for c in page)
        assert by_id(replicas[user]["favorites"]) == sync_server.rest_rows("favorites", token)
        assert {r["user_id"] for r in by_id(replicas[user]["favorites"]).values()} == {user}
    assert len(replicas[user_a]["favorites"]) == 2 and len(replicas[user_b]["favorites"]) == 3
    # A cursor is bound to its caller: B cannot continue A's.
    stolen = sync_server.pull("favorites", cursors[user_a], token=token_b)
    assert stolen.status_code == 409 and stolen.json()["code"] == "CARAVAN_MUST_REFETCH"


def test_a_3000_row_transaction_arrives_in_one_page(sync_server):
    user, token = sync_server.sign_up()
    cursor, _ = pull_all(sync_server, "favorites", {}, token=token)
    places = sorted(sync_server.rest_rows("places"))[:3000]
    r = httpx.post(f"{sync_server.url}/rest/v1/favorites", headers=sync_server.service_headers(),
                   json=[{"user_id": user, "place_id": p} for p in places], timeout=120)
    assert r.status_code == 201, r.text
    first = sync_server.pull("favorites", cursor, limit=1000, token=token)
    assert first.status_code == 200
    assert len(first.json()["changes"]) == 3000, "a transaction is never split across pages"
    rest = sync_server.pull("favorites", first.json()["cursor"], limit=1000, token=token).json()
    assert rest["changes"] == [] and rest["has_more"] is False


def test_refused_and_unknown_tables(sync_server):
    anon_favorites = sync_server.pull("favorites")
    assert anon_favorites.status_code == 403 and anon_favorites.json()["code"] == "42501"
    not_synced = sync_server.pull("users")  # GroupDecisions' own users table: a REST table, not a synced one
    assert not_synced.status_code == 400 and not_synced.json()["code"] == "CARAVAN_NOT_SYNCED"
    for tables in ("auth_users", "caravan_changes", "caravan_sync_mutations", "no_such_table"):
        r = sync_server.pull(tables)
        assert r.status_code == 404 and r.json()["code"] == "PGRST205", tables
        assert "caravan" not in r.json()["message"] or tables.startswith("caravan"), "no internal detail"
    missing = sync_server.pull("")
    assert missing.status_code == 400 and set(missing.json()) == {"code", "details", "hint", "message"}
    no_key = httpx.get(f"{sync_server.url}/sync/v1/pull", params={"tables": "places"})
    assert no_key.status_code == 401


def _must_refetch(response: httpx.Response) -> None:
    assert response.status_code == 409, response.text
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert body["code"] == "CARAVAN_MUST_REFETCH" and body["hint"] == "Pull again without a cursor" and body["details"] is None


def test_malformed_foreign_and_compacted_cursors_must_refetch(sync_server, apple_issuer):
    cursor, _ = pull_all(sync_server, "categories", {})
    for bad in ("garbage", "eyJ2IjoxfQ", cursor[:-3], "%00", "x" * 5000):
        _must_refetch(sync_server.pull("categories", bad))

    other = new_deployment("caravan-sync-other-")
    try:
        keys = json.loads(_run("keys", *other.args, "--json").stdout)
        with serving(other, auth_environment(apple_issuer), log_name="other.log") as (_, url):
            r = httpx.get(f"{url}/sync/v1/pull", params={"tables": "categories"}, headers={"apikey": keys["anon_key"]})
            assert r.status_code == 200
            foreign = r.json()["cursor"]
    finally:
        other.remove()
    _must_refetch(sync_server.pull("categories", foreign))

    # A write, then compaction of everything: the old cursor has missed entries; a new snapshot works.
    r = httpx.post(f"{sync_server.url}/rest/v1/categories", headers=sync_server.service_headers(),
                   json={"id": f"sync-{uuid.uuid4().hex[:8]}", "name_ar": "فئة", "name_en": "Category"})
    assert r.status_code == 201, r.text
    compacted = _run("changes", "compact", "--older-than", "0s", "--json", *sync_server.deployment.args)
    assert compacted.returncode == 0, compacted.stderr
    assert json.loads(compacted.stdout)["removed_changes"] >= 1
    _must_refetch(sync_server.pull("categories", cursor))
    replica: dict[str, dict[str, Any]] = {}
    fresh, _ = pull_all(sync_server, "categories", replica)
    assert by_id(replica["categories"]) == sync_server.rest_rows("categories")
    assert sync_server.pull("categories", fresh).status_code == 200


def test_push_replayed_three_times_changes_the_server_once(sync_server):
    user, token = sync_server.sign_up()
    other, _ = sync_server.sign_up()
    places = sorted(sync_server.rest_rows("places"))[10:13]
    favorite = str(uuid.uuid4())
    mutations = [
        {"id": str(uuid.uuid4()), "table": "favorites", "op": "insert", "record": {"id": favorite, "user_id": user, "place_id": places[0], "note": "x"}},
        {"id": str(uuid.uuid4()), "table": "favorites", "op": "insert", "record": {"user_id": other, "place_id": places[1]}},
        {"id": str(uuid.uuid4()), "table": "favorites", "op": "update", "key": {"id": favorite}, "record": {"note": "y"}},
        {"id": str(uuid.uuid4()), "table": "favorites", "op": "insert", "record": {"user_id": user, "place_id": places[2], "note": "z"}},
        {"id": str(uuid.uuid4()), "table": "favorites", "op": "insert", "record": {"user_id": user, "place_id": "no-such-place"}},
    ]
    first = sync_server.push(mutations, token)
    assert first.status_code == 200, first.text
    results = first.json()["results"]
    assert [r["id"] for r in results] == [m["id"] for m in mutations]
    assert [r["status"] for r in results] == ["applied", "rejected", "applied", "applied", "rejected"]
    assert results[1]["error"]["code"] == "42501", "a policy-refused mutation is rejected with the REST error; later ones still apply"
    assert results[4]["error"]["code"] == "23503"
    assert set(results[1]["error"]) == {"code", "message", "details", "hint"}
    assert results[0]["seq"] < results[2]["seq"] < results[3]["seq"]
    rows = sync_server.rest_rows("favorites", token)
    assert {r["place_id"]: r["note"] for r in rows.values()} == {places[0]: "y", places[2]: "z"}

    for _ in range(3):
        again = sync_server.push(mutations, token)
        assert again.status_code == 200
        replayed = again.json()["results"]
        assert all(r.pop("replayed") is True for r in replayed)
        assert replayed == results, "the same verdicts, from the store"
    assert sync_server.rest_rows("favorites", token) == rows, "replays change nothing"

    # The write checkpoint: once the pull cursor passes it, the pulled state includes the mutation.
    replica: dict[str, dict[str, Any]] = {}
    pull_all(sync_server, "favorites", replica, token=token)
    assert {r["note"] for r in by_id(replica["favorites"]).values()} == {"y", "z"}


def test_push_rejects_bad_bodies_without_writing(sync_server):
    for body in (b"{not json", b"[]", json.dumps({"mutations": [{"id": "nope", "table": "favorites", "op": "insert"}]}).encode()):
        r = httpx.post(f"{sync_server.url}/sync/v1/push", content=body, headers={**sync_server.headers(), "Content-Type": "application/json"})
        assert r.status_code == 400 and r.json()["code"] == "PGRST102", body
    many = [{"id": str(uuid.uuid4()), "table": "favorites", "op": "delete", "key": {"id": str(uuid.uuid4())}} for _ in range(1001)]
    too_many = sync_server.push(many)
    assert too_many.status_code == 413 and too_many.json()["code"] == "CARAVAN_PAYLOAD_TOO_LARGE"


def test_a_server_killed_mid_push_applies_every_mutation_exactly_once(apple_issuer):
    """SIGKILL in the middle of a 1,000-mutation push, then the whole batch again with the same ids.

    On its own deployment: a data directory serves one server at a time (`caravan.lock`)."""
    deployment = new_deployment("caravan-sync-crash-")
    try:
        _crash_mid_push_then_retry(deployment, apple_issuer)
    finally:
        deployment.remove()


def _crash_mid_push_then_retry(deployment, apple_issuer) -> None:
    place = f"crash-{uuid.uuid4().hex[:8]}"
    tag = uuid.uuid4().hex[:8]
    mutations = [
        {"id": str(uuid.uuid4()), "table": "menu_prices", "op": "insert",
         "record": {"place_id": place, "item_name_ar": f"crash-{tag}-{i}", "price": i + 0.5}}
        for i in range(1000)
    ]
    keys = json.loads(_run("keys", *deployment.args, "--json").stdout)
    service = {"apikey": keys["service_role_key"], "Authorization": f"Bearer {keys['service_role_key']}"}

    def count(url: str) -> int:
        r = httpx.get(f"{url}/rest/v1/menu_prices", params={"item_name_ar": f"like.crash-{tag}-*", "select": "id", "limit": 1},
                      headers={**service, "Prefer": "count=exact"}, timeout=30)
        return int(r.headers["content-range"].split("/")[1])

    proc, port = _start(deployment, deployment.data_dir / "crash.log", auth_environment(apple_issuer))
    url = f"http://127.0.0.1:{port}"
    created = httpx.post(f"{url}/rest/v1/places", json=_new_place(place), headers=service, timeout=30)
    assert created.status_code == 201, created.text
    outcome: dict[str, Any] = {}

    def push() -> None:
        try:
            outcome["response"] = httpx.post(f"{url}/sync/v1/push", json={"mutations": mutations}, headers=service, timeout=300)
        except httpx.HTTPError as error:
            outcome["error"] = error

    thread = threading.Thread(target=push)
    thread.start()
    deadline = time.monotonic() + 120
    while count(url) < 20:
        assert time.monotonic() < deadline, "the push never started writing"
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    thread.join(timeout=60)
    assert "error" in outcome, "the kill came after the push had finished; the test did not crash it mid-push"

    with serving(deployment, auth_environment(apple_issuer), log_name="crash-restart.log") as (_, url):
        before_retry = count(url)
        assert 20 <= before_retry < 1000
        retry = httpx.post(f"{url}/sync/v1/push", json={"mutations": mutations}, headers=service, timeout=300)
        assert retry.status_code == 200, retry.text
        results = retry.json()["results"]
        assert len(results) == 1000 and all(r["status"] == "applied" for r in results)
        assert sum(1 for r in results if r.get("replayed")) == before_retry, "what committed before the kill is replayed, not re-applied"
        assert count(url) == 1000
        names = httpx.get(f"{url}/rest/v1/menu_prices", params={"item_name_ar": f"like.crash-{tag}-*", "select": "item_name_ar", "limit": 2000},
                          headers=service, timeout=60).json()
        assert sorted(n["item_name_ar"] for n in names) == sorted(f"crash-{tag}-{i}" for i in range(1000)), "every mutation exactly once"

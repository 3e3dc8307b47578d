"""Realtime (`/realtime/v1/websocket`, wire-protocol §4): realtime-py 2.34.1 (vsn 1.0.0) end to end, and the vsn 2.0.0
framing of supabase-swift through a raw WebSocket client. Runs on both engines; the two-instance ordering test runs
in the PostgreSQL pass. The module has a deployment of its own (no places import): its writes would otherwise
change the counts the REST tests check on the shared one."""
from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from typing import Any, Callable

import httpx
import pytest
import websockets
from realtime import AsyncRealtimeClient, RealtimeSubscribeStates

from conftest import Server, _run, auth_environment, serving
from deployments import ENGINE, new_deployment
from test_rest import _mint

WAIT = 15.0


def run(coroutine):
    return asyncio.run(coroutine)


async def eventually(predicate: Callable[[], bool], timeout: float = WAIT) -> None:
    """Waits until `predicate` holds; fails after `timeout` (a deadline for delivery, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("the expected realtime events did not arrive")
        await asyncio.sleep(0.02)


async def settle(seconds: float = 0.5) -> None:
    """Gives a frame that must not come a chance to arrive (used only before asserting absence)."""
    await asyncio.sleep(seconds)


@pytest.fixture(scope="module")
def server(apple_issuer):
    """A fresh deployment served for this module, with two places (favorites reference them)."""
    deployment = new_deployment("caravan-realtime-")
    try:
        keys_run = _run("keys", *deployment.args, "--json")
        assert keys_run.returncode == 0, keys_run.stderr
        keys = json.loads(keys_run.stdout)
        with serving(deployment, auth_environment(apple_issuer), log_name="serve-realtime.log") as (proc, url):
            places = [new_place("cafe") for _ in range(2)]
            r = httpx.post(f"{url}/rest/v1/places", json=places,
                           headers={"apikey": keys["anon_key"], "Authorization": f"Bearer {keys['service_role_key']}"})
            assert r.status_code == 201, r.text
            yield Server(url=url, rest_url=f"{url}/rest/v1", anon_key=keys["anon_key"], service_role_key=keys["service_role_key"],
                         data_dir=deployment.data_dir, deployment=deployment, places=places, process=proc)
    finally:
        deployment.remove()


@pytest.fixture(scope="module")
def jwt_secret(server) -> bytes:
    """The deployment's HS256 secret (the anon key verifies with it)."""
    import jwt

    secret = server.deployment.signing_secret_bytes()
    jwt.decode(server.anon_key, secret, algorithms=["HS256"])
    return secret


@pytest.fixture(scope="module")
def admin_token(jwt_secret) -> str:
    return _mint(jwt_secret, role="authenticated", sub=str(uuid.uuid4()), app_metadata={"role": "admin"})


def rest(server, token: str) -> httpx.Client:
    return httpx.Client(base_url=server.rest_url, timeout=60.0,
                        headers={"apikey": server.anon_key, "Authorization": f"Bearer {token}", "Prefer": "return=representation"})


def sign_up(server) -> tuple[str, str]:
    """A real user (favorites reference users): its access token and id."""
    r = httpx.post(f"{server.url}/auth/v1/signup", headers={"apikey": server.anon_key},
                   json={"email": f"rt-{uuid.uuid4().hex[:10]}@example.com", "password": "correct horse battery"})
    assert r.status_code == 200, r.text
    body = r.json()
    return body["access_token"], body["user"]["id"]


def new_place(category: str, **extra: Any) -> dict[str, Any]:
    return {"id": f"rt-{uuid.uuid4().hex[:12]}", "name_ar": "مقهى", "name_en": "Realtime Café", "category": category,
            "category_ar": "مقهى", **extra}


async def subscribed(server, token: str | None, topic: str, bindings: list[dict[str, Any]], sink: list) -> tuple[AsyncRealtimeClient, Any]:
    client = AsyncRealtimeClient(f"{server.url}/realtime/v1", server.anon_key, auto_reconnect=False)
    await client.connect()
    if token:
        await client.set_auth(token)
    channel = client.channel(topic)
    for binding in bindings:
        channel.on_postgres_changes(callback=sink.append, **binding)
    states = []
    await channel.subscribe(lambda state, error: states.append((state, error)))
    assert states and states[-1][0] == RealtimeSubscribeStates.SUBSCRIBED, states
    return client, channel


def test_insert_update_delete_reach_the_callbacks(server, admin_token):
    category = f"rt-{uuid.uuid4().hex[:8]}"

    async def scenario():
        events: list = []
        client, _ = await subscribed(server, None, "places-crud", [
            {"event": "*", "table": "places", "filter": f"category=eq.{category}"}], events)
        with rest(server, admin_token) as http:
            row = new_place(category)
            assert http.post("/places", json=row).status_code == 201
            await eventually(lambda: len(events) == 1)
            assert http.patch(f"/places?id=eq.{row['id']}", json={"name_en": "Renamed"}).status_code == 200
            await eventually(lambda: len(events) == 2)
            assert http.delete(f"/places?id=eq.{row['id']}").status_code == 200
            await eventually(lambda: len(events) == 3)
        await client.close()
        inserted, updated, deleted = (e["data"] for e in events)
        assert [inserted["type"], updated["type"], deleted["type"]] == ["INSERT", "UPDATE", "DELETE"]
        assert inserted["record"]["id"] == row["id"] and inserted["record"]["name_en"] == "Realtime Café"
        assert inserted["errors"] is None and inserted["schema"] == "public" and inserted["table"] == "places"
        assert {"name": "id", "type": "text"} in inserted["columns"]
        assert inserted["commit_timestamp"].endswith("Z")
        assert updated["record"]["name_en"] == "Renamed" and updated["old_record"] == {"id": row["id"]}
        assert deleted["old_record"] == {"id": row["id"]} and "record" not in deleted
        assert deleted["columns"] == [{"name": "id", "type": "text"}]
        # realtime-py validates `data` as a TypedDict and drops `seq`; the raw-client tests check it.

    run(scenario())


def test_filters_eq_in_neq(server, admin_token):
    category = f"rt-{uuid.uuid4().hex[:8]}"
    rows = [new_place(category, rating_count=n) for n in (1, 2, 3)]

    async def scenario():
        eq, within, neq = [], [], []
        clients = []
        for sink, flt in ((eq, "rating_count=eq.2"), (within, "rating_count=in.(1,3)"), (neq, "rating_count=neq.2")):
            client, _ = await subscribed(server, None, f"filter-{uuid.uuid4().hex[:6]}",
                                         [{"event": "INSERT", "table": "places", "filter": f"{flt},category=eq.{category}"}], sink)
            clients.append(client)
        with rest(server, admin_token) as http:
            assert http.post("/places", json=rows).status_code == 201
        await eventually(lambda: len(eq) == 1 and len(within) == 2 and len(neq) == 2)
        await settle()
        for client in clients:
            await client.close()
        counts = lambda sink: sorted(e["data"]["record"]["rating_count"] for e in sink)  # noqa: E731
        assert (counts(eq), counts(within), counts(neq)) == ([2], [1, 3], [1, 3])

    run(scenario())


def test_favorites_owner_policy(server):
    alice_token, alice_id = sign_up(server)
    bob_token, bob_id = sign_up(server)
    place_id = server.places[0]["id"]

    async def scenario():
        alice_events, bob_events = [], []
        a, _ = await subscribed(server, alice_token, "favs-a", [{"event": "*", "table": "favorites"}], alice_events)
        b, _ = await subscribed(server, bob_token, "favs-b", [{"event": "*", "table": "favorites"}], bob_events)
        with rest(server, alice_token) as alice_http, rest(server, bob_token) as bob_http:
            mine = alice_http.post("/favorites", json={"user_id": alice_id, "place_id": place_id, "note": "private"}).json()[0]
            theirs = bob_http.post("/favorites", json={"user_id": bob_id, "place_id": place_id}).json()[0]
            await eventually(lambda: len(alice_events) == 1 and len(bob_events) == 1)
            assert bob_http.delete(f"/favorites?id=eq.{theirs['id']}").status_code == 200
            assert alice_http.delete(f"/favorites?id=eq.{mine['id']}").status_code == 200
            await eventually(lambda: len(alice_events) == 2 and len(bob_events) == 2)
        await settle()
        await a.close()
        await b.close()
        assert [e["data"]["record"]["id"] for e in alice_events[:1]] == [mine["id"]]
        assert [e["data"]["record"]["id"] for e in bob_events[:1]] == [theirs["id"]]
        # A row never visible to Alice sends her nothing; her own deleted row arrives key-only.
        assert [e["data"]["type"] for e in alice_events] == ["INSERT", "DELETE"]
        assert alice_events[1]["data"]["old_record"] == {"id": mine["id"]}
        assert "note" not in json.dumps(alice_events[1]["data"])
        assert bob_events[1]["data"]["old_record"] == {"id": theirs["id"]}

    run(scenario())


def test_update_out_of_is_active_reaches_anon_as_delete(server, admin_token):
    category = f"rt-{uuid.uuid4().hex[:8]}"

    async def scenario():
        events: list = []
        client, _ = await subscribed(server, None, "moves", [{"event": "*", "table": "places", "filter": f"category=eq.{category}"}], events)
        with rest(server, admin_token) as http:
            row = new_place(category)
            http.post("/places", json=row)
            await eventually(lambda: len(events) == 1)
            http.patch(f"/places?id=eq.{row['id']}", json={"is_active": False})
            await eventually(lambda: len(events) == 2)
            http.patch(f"/places?id=eq.{row['id']}", json={"name_en": "hidden edit"})
            http.patch(f"/places?id=eq.{row['id']}", json={"is_active": True})
            await eventually(lambda: len(events) == 3)
        await settle()
        await client.close()
        assert [e["data"]["type"] for e in events] == ["INSERT", "DELETE", "INSERT"]
        assert events[1]["data"]["old_record"] == {"id": row["id"]}

    run(scenario())


# --- vsn 2.0.0 with a raw client -----------------------------------------------------------------------------------

def ws_url(server, vsn: str = "2.0.0", key: str | None = None) -> str:
    return f"{server.url.replace('http://', 'ws://')}/realtime/v1/websocket?apikey={key or server.anon_key}&vsn={vsn}"


async def frames_until(ws, predicate: Callable[[Any], bool], timeout: float = WAIT) -> list:
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no matching frame; saw {seen}"
        frame = json.loads(await asyncio.wait_for(ws.recv(), remaining))
        seen.append(frame)
        if predicate(frame):
            return seen


def test_vsn2_frames_heartbeat_join_ref_and_a_write_right_after_the_reply(server, admin_token):
    category = f"rt-{uuid.uuid4().hex[:8]}"

    async def scenario():
        async with websockets.connect(ws_url(server)) as ws:
            await ws.send(json.dumps([None, "5", "phoenix", "heartbeat", {}]))
            assert json.loads(await ws.recv()) == [None, "5", "phoenix", "phx_reply", {"status": "ok", "response": {}}]
            config = {"broadcast": {"ack": False, "self": False, "replay": {"since": 0}}, "presence": {"key": "", "enabled": False},
                      "private": False, "postgres_changes": [{"event": "*", "schema": "public", "table": "places",
                                                              "filter": f"category=eq.{category}"}], "brand_new_key": 1}
            await ws.send(json.dumps(["3", "3", "realtime:v2", "phx_join", {"config": config, "access_token": server.anon_key}]))
            reply = json.loads(await ws.recv())
            assert reply[:4] == ["3", "3", "realtime:v2", "phx_reply"] and reply[4]["status"] == "ok"
            binding = reply[4]["response"]["postgres_changes"][0]
            assert isinstance(binding["id"], int) and binding["filter"] == f"category=eq.{category}"
            # The subscription is live before the reply: a write made now is delivered.
            row = new_place(category)
            with rest(server, admin_token) as http:
                assert http.post("/places", json=row).status_code == 201
            seen = await frames_until(ws, lambda f: f[3] == "postgres_changes")
            system = [f for f in seen if f[3] == "system"]
            assert system and system[0][:3] == ["3", None, "realtime:v2"] and system[0][4]["channel"] == "v2"
            change = seen[-1]
            assert change[:4] == [None, None, "realtime:v2", "postgres_changes"]
            assert change[4]["ids"] == [binding["id"]] and change[4]["data"]["record"]["id"] == row["id"]
            await ws.send(json.dumps(["3", "9", "realtime:v2", "phx_leave", {}]))
            left = await frames_until(ws, lambda f: f[3] == "phx_close")
            assert [f[3] for f in left[-2:]] == ["phx_reply", "phx_close"] and left[-1][:2] == ["3", "3"]

    run(scenario())


def test_bad_apikey_is_refused_and_bad_filter_is_a_join_error(server):
    async def scenario():
        with pytest.raises(websockets.InvalidStatus) as refused:
            async with websockets.connect(ws_url(server, key="not-a-key")):
                pass
        # The refused upgrade is a 401 with the PostgREST error JSON (wire-protocol §4), as the same request without
        # upgrade headers is.
        assert refused.value.response.status_code == 401
        assert json.loads(refused.value.response.body)["code"] == "PGRST301"
        plain = httpx.get(f"{server.url}/realtime/v1/websocket", params={"apikey": "not-a-key", "vsn": "2.0.0"})
        assert plain.status_code == 401
        async with websockets.connect(ws_url(server, vsn="1.0.0")) as ws:
            await ws.send(json.dumps({"topic": "realtime:bad", "event": "phx_join", "ref": "1", "join_ref": "1", "payload": {
                "config": {"postgres_changes": [{"event": "*", "schema": "public", "table": "places", "filter": "nope=eq.1"}]}}}))
            reply = json.loads(await ws.recv())
            assert reply["event"] == "phx_reply" and reply["ref"] == "1" and reply["payload"]["status"] == "error"
            for table in ("no_such_table", "auth_users", "caravan_changes"):  # an app may own `users`; Caravan's is auth_users
                await ws.send(json.dumps({"topic": f"realtime:{table}", "event": "phx_join", "ref": "2", "payload": {
                    "config": {"postgres_changes": [{"event": "*", "schema": "public", "table": table}]}}}))
                assert json.loads(await ws.recv())["payload"]["status"] == "error"

    run(scenario())


def test_token_refresh_switches_visibility_and_an_expired_token_closes(server, jwt_secret):
    alice_token, alice_id = sign_up(server)
    bob_token, bob_id = sign_up(server)
    place_id = server.places[1]["id"]

    async def scenario():
        async with websockets.connect(ws_url(server, vsn="1.0.0")) as ws:
            join = {"topic": "realtime:refresh", "event": "phx_join", "ref": "1", "payload": {
                "config": {"postgres_changes": [{"event": "INSERT", "schema": "public", "table": "favorites"}]}, "access_token": alice_token}}
            await ws.send(json.dumps(join))
            await frames_until(ws, lambda f: f["event"] == "phx_reply")
            await ws.send(json.dumps({"topic": "realtime:refresh", "event": "access_token", "ref": None, "payload": {"access_token": bob_token}}))
            await asyncio.sleep(0.2)  # the refresh has no reply; let it apply before writing
            with rest(server, alice_token) as alice_http, rest(server, bob_token) as bob_http:
                alice_http.post("/favorites", json={"user_id": alice_id, "place_id": place_id})
                bob_row = bob_http.post("/favorites", json={"user_id": bob_id, "place_id": place_id}).json()[0]
            seen = await frames_until(ws, lambda f: f["event"] == "postgres_changes")
            changes = [f for f in seen if f["event"] == "postgres_changes"]
            assert [c["payload"]["data"]["record"]["id"] for c in changes] == [bob_row["id"]]
            expired = _mint(jwt_secret, role="authenticated", sub=bob_id, exp=int(time.time()) - 10)
            await ws.send(json.dumps({"topic": "realtime:refresh", "event": "access_token", "ref": None, "payload": {"access_token": expired}}))
            closing = await frames_until(ws, lambda f: f["event"] == "phx_close")
            system = [f for f in closing if f["event"] == "system"]
            assert system and system[0]["payload"]["status"] == "error" and system[0]["ref"] is None
            assert system[0]["payload"]["channel"] == "refresh" and system[0]["payload"]["extension"] == "system"

    run(scenario())


def test_ten_thousand_rows_in_one_transaction_arrive_whole_or_as_the_resync_signal(server, admin_token):
    prefix = f"bulk-{uuid.uuid4().hex[:8]}-"
    rows = [{"id": f"{prefix}{i:05d}", "name_ar": "ف", "name_en": "c"} for i in range(10_000)]

    async def scenario():
        async with websockets.connect(ws_url(server, vsn="1.0.0"), max_size=None) as ws:
            await ws.send(json.dumps({"topic": "realtime:bulk", "event": "phx_join", "ref": "1", "payload": {
                "config": {"postgres_changes": [{"event": "INSERT", "schema": "public", "table": "categories", "filter": f"id=like.{prefix}*"}]}}}))
            await frames_until(ws, lambda f: f["event"] == "phx_reply")
            def insert():
                with httpx.Client(timeout=300.0) as http:
                    return http.post(f"{server.rest_url}/categories", json=rows, headers={
                        "apikey": server.anon_key, "Authorization": f"Bearer {admin_token}", "Prefer": "return=minimal"})
            # The insert can outlast the server's 60 s heartbeat timeout (PostgreSQL, debug build): heartbeat
            # meanwhile, as every Phoenix client does.
            post = asyncio.ensure_future(asyncio.to_thread(insert))
            while not post.done():
                await ws.send(json.dumps({"topic": "phoenix", "event": "heartbeat", "payload": {}, "ref": "hb"}))
                await asyncio.wait({post}, timeout=20)
            r = post.result()
            assert r.status_code == 201, r.text[:300]
            seqs, resync = [], False
            while len(seqs) < len(rows) and not resync:
                frame = json.loads(await asyncio.wait_for(ws.recv(), 60))
                if frame["event"] == "postgres_changes":
                    seqs.append(frame["payload"]["data"]["seq"])
                elif frame["event"] == "system" and frame["payload"]["status"] == "error":
                    assert frame["payload"]["message"] == "Too many pending changes: resync"
                    resync = True
            if resync:
                assert seqs == [], "a transaction must not be split by an overflow"
            else:
                assert seqs == sorted(set(seqs)) and len(seqs) == len(rows)

    run(scenario())


def concurrent_writes(urls: list[str], server, token: str, prefix: str, writers: int, per_writer: int) -> None:
    errors: list = []

    def writer(index: int) -> None:
        try:
            with httpx.Client(timeout=60.0) as http:
                for n in range(per_writer):
                    r = http.post(f"{urls[index % len(urls)]}/rest/v1/categories", headers={
                        "apikey": server.anon_key, "Authorization": f"Bearer {token}"},
                        json={"id": f"{prefix}{index}-{n}", "name_ar": "ت", "name_en": "t"})
                    assert r.status_code == 201, r.text
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


async def ordered_seqs(url: str, server, prefix: str, expected: int, write: Callable[[], None]) -> list[int]:
    async with websockets.connect(f"{url.replace('http://', 'ws://')}/realtime/v1/websocket?apikey={server.anon_key}&vsn=1.0.0") as ws:
        await ws.send(json.dumps({"topic": "realtime:order", "event": "phx_join", "ref": "1", "payload": {
            "config": {"postgres_changes": [{"event": "INSERT", "schema": "public", "table": "categories", "filter": f"id=like.{prefix}*"}]}}}))
        await frames_until(ws, lambda f: f["event"] == "phx_reply")
        await asyncio.get_running_loop().run_in_executor(None, write)
        seqs: list[int] = []
        while len(seqs) < expected:
            frame = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
            assert frame["event"] != "system" or frame["payload"]["status"] == "ok", frame
            if frame["event"] == "postgres_changes":
                seqs.append(frame["payload"]["data"]["seq"])
        return seqs


def test_order_under_eight_concurrent_writers(server, admin_token):
    prefix = f"order-{uuid.uuid4().hex[:8]}-"
    seqs = run(ordered_seqs(server.url, server, prefix, 8 * 25,
                            lambda: concurrent_writes([server.url], server, admin_token, prefix, writers=8, per_writer=25)))
    assert seqs == sorted(set(seqs)) and len(seqs) == 200


@pytest.mark.skipif(ENGINE != "postgres", reason="two instances share one database only on PostgreSQL")
def test_order_across_two_postgres_instances(server, admin_token):
    prefix = f"multi-{uuid.uuid4().hex[:8]}-"
    with serving(server.deployment, {}, log_name="serve-second.log") as (_, second_url):
        seqs = run(ordered_seqs(server.url, server, prefix, 8 * 25,
                                lambda: concurrent_writes([server.url, second_url], server, admin_token, prefix, writers=8, per_writer=25)))
    assert seqs == sorted(set(seqs)) and len(seqs) == 200


# --- broadcast and presence ---------------------------------------------------------------------------------------

async def broadcast_pair(url_a: str, url_b: str, key: str, self_a: bool):
    """Two realtime-py clients on topic room-* (A on `url_a`, B on `url_b`), each collecting `typing` broadcasts."""
    topic = f"room-{uuid.uuid4().hex[:6]}"
    a = AsyncRealtimeClient(f"{url_a}/realtime/v1", key, auto_reconnect=False)
    b = AsyncRealtimeClient(f"{url_b}/realtime/v1", key, auto_reconnect=False)
    got_a, got_b = [], []
    chan_a = a.channel(topic, {"config": {"broadcast": {"self": self_a, "ack": False}}})
    chan_a.on_broadcast("typing", got_a.append)
    await chan_a.subscribe()
    chan_b = b.channel(topic)
    chan_b.on_broadcast("typing", got_b.append)
    await chan_b.subscribe()
    return (a, chan_a, got_a), (b, chan_b, got_b)


def test_broadcast_between_two_clients_with_self_and_rest(server):
    async def scenario():
        (a, chan_a, got_a), (b, chan_b, got_b) = await broadcast_pair(server.url, server.url, server.anon_key, self_a=True)
        await chan_b.send_broadcast("typing", {"user": "b"})
        await eventually(lambda: len(got_a) == 1)
        await chan_a.send_broadcast("typing", {"user": "a"})
        await eventually(lambda: len(got_a) == 2)
        await chan_b.http_send("typing", {"user": "rest"})
        await eventually(lambda: len(got_a) == 3 and len(got_b) == 2)
        await settle()
        await a.close()
        await b.close()
        assert [m["payload"]["user"] for m in got_a] == ["b", "a", "rest"]
        assert [m["payload"]["user"] for m in got_b] == ["a", "rest"]  # no self by default

    run(scenario())


def test_presence_between_two_clients(server):
    async def scenario():
        a = AsyncRealtimeClient(f"{server.url}/realtime/v1", server.anon_key, auto_reconnect=False)
        b = AsyncRealtimeClient(f"{server.url}/realtime/v1", server.anon_key, auto_reconnect=False)
        chan_a = a.channel("lobby", {"config": {"presence": {"key": "alice"}}})
        chan_a.on_presence_sync(lambda: None)
        await chan_a.subscribe()
        chan_b = b.channel("lobby", {"config": {"presence": {"key": "bob"}}})
        joins, leaves = [], []
        chan_b.on_presence_join(lambda key, current, new: joins.append(key))
        chan_b.on_presence_leave(lambda key, current, left: leaves.append(key))
        await chan_b.subscribe()
        await chan_a.track({"status": "online"})
        await eventually(lambda: "alice" in chan_b.presence_state())
        assert chan_b.presence_state()["alice"][0]["status"] == "online"
        await chan_a.untrack()
        await eventually(lambda: "alice" in leaves)
        await a.close()
        await b.close()
        assert "alice" in joins

    run(scenario())


@pytest.mark.skipif(ENGINE != "postgres", reason="instances relay broadcasts through PostgreSQL NOTIFY")
def test_broadcast_across_two_postgres_instances(server):
    with serving(server.deployment, {}, log_name="serve-broadcast.log") as (_, second_url):
        async def scenario():
            (a, chan_a, got_a), (b, chan_b, got_b) = await broadcast_pair(server.url, second_url, server.anon_key, self_a=False)
            await chan_b.send_broadcast("typing", {"from": "second"})
            await eventually(lambda: len(got_a) == 1)
            await chan_a.http_send("typing", {"from": "rest-first"})
            await eventually(lambda: len(got_a) == 2 and len(got_b) == 1)
            await settle()
            await a.close()
            await b.close()
            assert [m["payload"]["from"] for m in got_a] == ["second", "rest-first"]
            assert [m["payload"]["from"] for m in got_b] == ["rest-first"]

        run(scenario())


def user_broadcast_push(join_ref: str, ref: str, topic: str, event: str, payload: Any) -> bytes:
    """A broadcast as supabase-swift's vsn 2.0.0 serializer sends it (RealtimeBinaryEncoder.encodeUserBroadcastPush):
    kind 3, the lengths of join_ref, ref, topic, event and metadata, encoding 1 (JSON), the strings, the payload."""
    fields = [join_ref.encode(), ref.encode(), topic.encode(), event.encode(), b""]
    return bytes([3, *[len(f) for f in fields], 1]) + b"".join(fields) + json.dumps(payload).encode()


def test_a_binary_vsn2_broadcast_reaches_the_channel_with_ack_and_self(server):
    topic = f"realtime:room-{uuid.uuid4().hex[:6]}"

    async def join(ws, join_ref: str, self_: bool):
        config = {"broadcast": {"ack": True, "self": self_}, "presence": {"key": "", "enabled": False}, "private": False,
                  "postgres_changes": []}
        await ws.send(json.dumps([join_ref, join_ref, topic, "phx_join", {"config": config, "access_token": server.anon_key}]))
        await frames_until(ws, lambda f: f[3] == "phx_reply" and f[1] == join_ref)

    async def scenario():
        async with websockets.connect(ws_url(server)) as sender, websockets.connect(ws_url(server)) as receiver:
            await join(sender, "1", self_=True)
            await join(receiver, "4", self_=False)
            await sender.send(user_broadcast_push("1", "2", topic, "typing", {"user": "سارة", "typing": True}))
            expected = {"type": "broadcast", "event": "typing", "payload": {"user": "سارة", "typing": True}}
            got = await frames_until(receiver, lambda f: f[3] == "broadcast")
            assert got[-1][2] == topic and got[-1][4] == expected
            # The acknowledgement and the echo (self: true) reach the sender, in either order.
            seen: list = []
            await frames_until(sender, lambda f: seen.append(f) or (any(x[3] == "phx_reply" and x[1] == "2" for x in seen)
                                                                     and any(x[3] == "broadcast" for x in seen)))
            assert next(x for x in seen if x[3] == "phx_reply" and x[1] == "2")[4]["status"] == "ok"
            assert next(x for x in seen if x[3] == "broadcast")[4] == expected

    run(scenario())


def test_a_raw_binary_broadcast_reaches_vsn2_sockets_as_a_kind4_frame_only(server):
    """A broadcast whose payload is raw bytes (encoding 0), as supabase-swift's `RealtimeSerializer.encodeBroadcastPush
    (binaryPayload:)` sends it: a vsn 2.0.0 subscriber gets the kind 4 frame its `decodeBinary` reads (kind, topic,
    event and metadata lengths, encoding 0, then the strings and the bytes); a vsn 1.0.0 subscriber (JSON only) gets
    nothing; the sender's ack arrives."""
    topic = f"realtime:cursor-{uuid.uuid4().hex[:6]}"
    raw = bytes([0, 1, 2, 254, 255])

    async def join(ws, join_ref: str):
        config = {"broadcast": {"ack": True, "self": False}, "presence": {"key": "", "enabled": False}, "private": False,
                  "postgres_changes": []}
        await ws.send(json.dumps([join_ref, join_ref, topic, "phx_join", {"config": config, "access_token": server.anon_key}]))
        await frames_until(ws, lambda f: f[3] == "phx_reply" and f[1] == join_ref)

    async def scenario():
        async with websockets.connect(ws_url(server)) as sender, websockets.connect(ws_url(server)) as receiver, \
                websockets.connect(ws_url(server, vsn="1.0.0")) as old:
            await join(sender, "1")
            await join(receiver, "4")
            await old.send(json.dumps({"topic": topic, "event": "phx_join", "ref": "1", "payload": {"config": {}}}))
            assert json.loads(await asyncio.wait_for(old.recv(), WAIT))["payload"]["status"] == "ok"
            fields = [b"1", b"2", topic.encode(), b"move", b""]
            await sender.send(bytes([3, *[len(f) for f in fields], 0]) + b"".join(fields) + raw)
            frame = await asyncio.wait_for(receiver.recv(), WAIT)
            assert isinstance(frame, bytes)
            topic_length, event_length, meta_length, encoding = frame[1], frame[2], frame[3], frame[4]
            assert frame[0] == 4 and encoding == 0
            assert frame[5:5 + topic_length].decode() == topic
            assert frame[5 + topic_length:5 + topic_length + event_length] == b"move"
            assert frame[5 + topic_length + event_length + meta_length:] == raw
            ack = await frames_until(sender, lambda f: f[3] == "phx_reply" and f[1] == "2")
            assert ack[-1][4]["status"] == "ok"
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(old.recv(), 1.0)

    run(scenario())

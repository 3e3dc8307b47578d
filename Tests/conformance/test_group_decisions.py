"""GroupDecisions (Fork in the Road) through the official Python client: real sign-ups, profiles written under
their own policy, the RPCs with their stable error codes, and the policy matrix (anon, member, admin, outsider,
service role × every table × select / insert / update / delete)."""
from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from postgrest.exceptions import APIError
from supabase import Client, create_client

PASSWORD = "conformance-pass-7"
TABLES = [
    "users", "member_profiles", "restaurants", "groups", "group_members", "co_members", "collections", "collection_restaurants",
    "decisions", "decision_candidates", "decision_participants", "votes", "notifications", "notification_outbox",
]


def _signed_up(server, name: str) -> tuple[Client, str]:
    client = create_client(server.url, server.anon_key)
    response = client.auth.sign_up({"email": f"{name}-{uuid.uuid4().hex[:8]}@example.com", "password": PASSWORD})
    assert response.session is not None and response.user is not None
    client.postgrest.auth(response.session.access_token)
    user_id = response.user.id
    client.table("users").insert({"id": user_id, "name": name.title(), "username": f"{name}{uuid.uuid4().hex[:6]}"}).execute()
    return client, user_id


def _token(client: Client) -> str:
    session = client.auth.get_session()
    assert session is not None
    return session.access_token


def _iso(delta_seconds: int) -> str:
    return (datetime.now(timezone.utc) + timedelta(seconds=delta_seconds)).isoformat()


@pytest.fixture(scope="module")
def world(server, service):
    admin, admin_id = _signed_up(server, "admin")
    member, member_id = _signed_up(server, "member")
    outsider, outsider_id = _signed_up(server, "outsider")
    restaurants = service.table("restaurants").insert(
        [{"google_place_id": f"conformance-{uuid.uuid4().hex}", "name": f"R{i}"} for i in range(3)]
    ).execute().data
    group_id = admin.rpc("create_group", {"name": "Lunch"}).execute().data
    admin.rpc("add_member", {"group_id": group_id, "user_id": member_id}).execute()
    collection = admin.table("collections").insert(
        {"name": "Spots", "type": "group", "owner_id": admin_id, "group_id": group_id}
    ).execute().data[0]
    # The collection's group is not repeated: the server fills it.
    items = admin.table("collection_restaurants").insert(
        [{"collection_id": collection["id"], "restaurant_id": r["id"], "position": i} for i, r in enumerate(restaurants)]
    ).execute().data
    assert [item["group_id"] for item in items] == [group_id] * len(restaurants)
    decision_id = admin.rpc("create_decision", {
        "collection_id": collection["id"], "method": "tiered", "deadline": _iso(3600), "visit_date": _iso(7200),
    }).execute().data
    member.rpc("submit_vote", {"decision_id": decision_id, "rankings": [restaurants[0]["id"]]}).execute()
    return {
        "admin": admin, "member": member, "outsider": outsider, "service": service,
        "anon": create_client(server.url, server.anon_key),
        "ids": {"admin": admin_id, "member": member_id, "outsider": outsider_id},
        "group": group_id, "collection": collection["id"], "decision": decision_id, "restaurants": [r["id"] for r in restaurants],
    }


def _visible(client: Client, table: str, **eq) -> int:
    query = client.table(table).select("*")
    for column, value in eq.items():
        query = query.eq(column, value)
    return len(query.execute().data)


def test_select_matrix(world):
    ids = world["ids"]
    # Only this module's rows count: restaurants and users may hold other tests' rows, so those are filtered.
    mine = {"restaurants": None, "users": None}
    expected = {
        "member_profiles": {"anon": 0, "member": 2, "admin": 2, "outsider": 1},
        "groups": {"anon": 0, "member": 1, "admin": 1, "outsider": 0},
        "group_members": {"anon": 0, "member": 2, "admin": 2, "outsider": 0},
        "co_members": {"anon": 0, "member": 0, "admin": 0, "outsider": 0},
        "collections": {"anon": 0, "member": 1, "admin": 1, "outsider": 0},
        "collection_restaurants": {"anon": 0, "member": 3, "admin": 3, "outsider": 0},
        "decisions": {"anon": 0, "member": 1, "admin": 1, "outsider": 0},
        "decision_candidates": {"anon": 0, "member": 3, "admin": 3, "outsider": 0},
        "decision_participants": {"anon": 0, "member": 2, "admin": 2, "outsider": 0},
        "votes": {"anon": 0, "member": 1, "admin": 0, "outsider": 0},
        "notifications": {"anon": 0, "member": 2, "admin": 0, "outsider": 0},
        "notification_outbox": {"anon": 0, "member": 0, "admin": 0, "outsider": 0},
    }
    assert set(expected) | set(mine) == set(TABLES)
    for table, by_actor in expected.items():
        for actor, count in by_actor.items():
            assert _visible(world[actor], table) == count, f"{actor} reads {table}"
    for actor in ["member", "admin", "outsider"]:
        assert _visible(world[actor], "users") == 1, f"{actor} reads only their own users row"
        assert _visible(world[actor], "users", id=ids[actor]) == 1
        assert _visible(world[actor], "restaurants", id=world["restaurants"][0]) == 1
    assert _visible(world["anon"], "users") == 0
    assert _visible(world["anon"], "restaurants") == 0
    assert _visible(world["service"], "co_members", group_id=world["group"]) == 2


def _refused(call, code: str) -> dict:
    with pytest.raises(APIError) as raised:
        call()
    assert raised.value.code == code, raised.value
    return raised.value.json() if hasattr(raised.value, "json") else {}


def test_write_matrix(world):
    admin, member, outsider, anon, service = (world[k] for k in ["admin", "member", "outsider", "anon", "service"])
    group, decision, ids = world["group"], world["decision"], world["ids"]
    for client in [admin, member, outsider, anon]:
        _refused(lambda: client.table("restaurants").insert({"google_place_id": uuid.uuid4().hex, "name": "X"}).execute(), "42501")
        _refused(lambda: client.table("groups").insert({"name": "Direct"}).execute(), "42501")
        _refused(lambda: client.table("notifications").insert(
            {"user_id": ids["member"], "type": "admin_alert", "title": "T", "message": "M"}).execute(), "42501")
    for client in [member, outsider]:
        _refused(lambda: client.table("group_members").insert({"group_id": group, "user_id": ids["outsider"]}).execute(), "42501")
        assert client.table("groups").update({"name": "Renamed"}).eq("id", group).execute().data == []
        assert client.table("decisions").update({"status": "closed"}).eq("id", decision).execute().data == []
    _refused(lambda: admin.table("votes").insert(
        {"decision_id": decision, "user_id": ids["member"], "rankings": [world["restaurants"][1]]}).execute(), "42501")
    assert len(admin.table("groups").update({"description": "weekly"}).eq("id", group).execute().data) == 1
    assert len(member.table("notifications").update({"read": True}).eq("user_id", ids["member"]).execute().data) == 2
    _refused(lambda: member.table("notifications").update({"title": "changed"}).eq("user_id", ids["member"]).execute(), "23514")
    assert len(service.table("co_members").select("*").eq("group_id", group).execute().data) == 2


def test_a_collection_item_claiming_another_group_is_refused_by_name(world):
    admin, outsider = world["admin"], world["outsider"]
    other = outsider.rpc("create_group", {"name": "Elsewhere"}).execute().data
    item = {"collection_id": world["collection"], "restaurant_id": world["restaurants"][0], "position": 9, "group_id": other}
    with pytest.raises(APIError) as raised:
        admin.table("collection_restaurants").upsert(item).execute()
    assert raised.value.code == "23514", raised.value
    assert "group_id" in f"{raised.value.message} {raised.value.details}", raised.value
    # The outsider, who cannot read the collection, is told only that the policy refuses the row.
    _refused(lambda: outsider.table("collection_restaurants").insert(item).execute(), "42501")


def test_rpc_errors_name_the_field(world):
    admin, member, outsider = world["admin"], world["member"], world["outsider"]
    cases = [
        (lambda: outsider.rpc("add_member", {"group_id": world["group"], "user_id": world["ids"]["outsider"]}).execute(), "42501", "group_id"),
        (lambda: admin.rpc("add_member", {"group_id": world["group"], "user_id": world["ids"]["outsider"], "role": "owner"}).execute(), "22023", "role"),
        (lambda: admin.rpc("leave_group", {"group_id": world["group"]}).execute(), "23514", "group_members.role"),
        (lambda: admin.rpc("create_decision", {"collection_id": world["collection"], "method": "dice", "visit_date": _iso(7200)}).execute(), "22023", "method"),
        (lambda: admin.rpc("create_decision", {"collection_id": world["collection"], "method": "tiered", "deadline": _iso(-60),
                                                "visit_date": _iso(7200)}).execute(), "22023", "deadline"),
        (lambda: outsider.rpc("submit_vote", {"decision_id": world["decision"], "rankings": [world["restaurants"][0]]}).execute(), "42501", "decision_id"),
        (lambda: member.rpc("submit_vote", {"decision_id": world["decision"], "rankings": [str(uuid.uuid4())]}).execute(), "22023", "rankings[0]"),
        (lambda: member.rpc("finalize_decision", {"decision_id": world["decision"]}).execute(), "42501", "decision_id"),
    ]
    for call, code, field in cases:
        with pytest.raises(APIError) as raised:
            call()
        assert raised.value.code == code, (field, raised.value)
        assert field in f"{raised.value.message} {raised.value.details}", (field, raised.value)


def test_a_full_vote_completes_the_decision_and_notifies(world):
    admin, member = world["admin"], world["member"]
    admin.rpc("submit_vote", {"decision_id": world["decision"], "rankings": [world["restaurants"][1], world["restaurants"][0]]}).execute()
    decision = admin.table("decisions").select("*").eq("id", world["decision"]).single().execute().data
    assert decision["status"] == "completed"
    # Ballots [r0] and [r1, r0]: 1–1 with r2 at 0 → r2 goes; 1–1 again, equal first preferences, Borda r0 = 1 + 1 = 2,
    # r1 = 2 → the greater id goes.
    assert decision["result_restaurant_id"] == min(world["restaurants"][0], world["restaurants"][1])
    results = member.table("notifications").select("*").eq("type", "decision_result").execute().data
    assert len(results) == 1 and results[0]["data"]["decisionId"] == world["decision"]
    # JSON paths through the client: the same value selected as text, filtered on and ordered by.
    paths = (member.table("notifications").select("type, decision:data->>decisionId, data->restaurantId")
             .eq("data->>decisionId", world["decision"]).eq("type", "decision_result").order("data->>decisionId").execute().data)
    assert paths == [{"type": "decision_result", "decision": world["decision"], "restaurantId": results[0]["data"]["restaurantId"]}]
    assert len(member.table("votes").select("*").eq("decision_id", world["decision"]).execute().data) == 2  # all, after close


def _short_decision(world) -> str:
    """A manual decision whose deadline passes two seconds from now."""
    return world["admin"].rpc("create_decision", {
        "collection_id": world["collection"], "method": "manual", "deadline": _iso(2), "visit_date": _iso(7200),
    }).execute().data


def test_a_read_settles_decisions_whose_deadline_passed(world, server):
    # The background run comes once a minute; a reader in between must not see an overdue decision still active.
    pulled = _short_decision(world)
    time.sleep(3)
    r = httpx.get(f"{server.url}/sync/v1/pull", params={"tables": "decisions"},
                  headers={"apikey": server.anon_key, "Authorization": f"Bearer {_token(world['member'])}"})
    assert r.status_code == 200, r.text
    records = {c["record"]["id"]: c["record"] for c in r.json()["changes"] if c["op"] == "upsert"}
    assert records[pulled]["status"] == "expired"

    read = _short_decision(world)
    time.sleep(3)
    row = world["member"].table("decisions").select("id,status").eq("id", read).single().execute().data
    assert row["status"] == "expired"


def test_notifications_reach_only_their_user_over_realtime(world, server):
    from test_realtime import eventually, run, settle, subscribed

    sinks: dict[str, list] = {"admin": [], "member": [], "outsider": []}

    async def scenario():
        clients = []
        for name, sink in sinks.items():
            client, _ = await subscribed(server, _token(world[name]), f"notifications-{name}",
                                         [{"event": "INSERT", "table": "notifications"}], sink)
            clients.append(client)
        decision = world["admin"].rpc("create_decision", {
            "collection_id": world["collection"], "method": "manual", "deadline": _iso(3600), "visit_date": _iso(7200),
        }).execute().data
        await eventually(lambda: len(sinks["member"]) >= 1)
        await settle()
        for client in clients:
            await client.close()
        return decision

    decision = run(scenario())
    [event] = sinks["member"]
    record = event["data"]["record"]
    assert record["user_id"] == world["ids"]["member"] and record["type"] == "group_decision"
    assert record["data"]["decisionId"] == decision
    assert sinks["admin"] == [] and sinks["outsider"] == []  # the creator is not notified; the outsider sees nobody's


def test_embedding_through_a_junction_and_an_ambiguous_relationship(world):
    """collections ↔ restaurants through collection_restaurants (many-to-many); group_members has two foreign keys
    from co_members, so embedding one in the other is PGRST201 until a hint chooses."""
    admin, member = world["admin"], world["member"]
    rows = admin.table("collections").select("id, restaurants(id)").eq("id", world["collection"]).execute().data
    assert sorted(r["id"] for r in rows[0]["restaurants"]) == sorted(world["restaurants"])
    # The members see the group collection's restaurants too; the outsider sees no such collection at all.
    assert member.table("collections").select("id, restaurants(id)").eq("id", world["collection"]).execute().data == rows
    assert world["outsider"].table("collections").select("id, restaurants(id)").eq("id", world["collection"]).execute().data == []
    with pytest.raises(APIError) as ambiguous:
        world["service"].table("group_members").select("user_id, co_members(*)").execute()
    assert ambiguous.value.code == "PGRST201"
    assert "co_members!viewer_id" in (ambiguous.value.hint or "") and "co_members!member_id" in (ambiguous.value.hint or "")
    hinted = world["service"].table("group_members").select("user_id, co_members!viewer_id(member_id)").eq("group_id", world["group"]).execute().data
    assert len(hinted) == 2
    for row in hinted:
        direct = (world["service"].table("co_members").select("member_id").eq("viewer_id", row["user_id"])
                  .eq("group_id", world["group"]).order("member_id").execute().data)
        assert sorted(row["co_members"], key=lambda r: r["member_id"]) == direct and direct



def test_a_groups_private_channel_is_joined_and_written_by_its_members_only(server, world):
    """Realtime Authorization (`config.private: true`) through the `realtime.messages` policy GroupDecisions declares:
    a group's members join the channel named by the group id and broadcast on it; an outsider's join is refused with
    the reason supabase-swift and realtime-js surface; a public channel of the same name never sees the private one's
    messages; the REST broadcast endpoint checks the same policy. Frames as supabase-swift's vsn 2.0.0 serializer
    sends them (`RealtimeSerializer.encodeText`)."""
    import asyncio
    import json

    import websockets

    group = world["group"]
    topic = f"realtime:{group}"
    url = server.url.replace("http", "ws", 1) + f"/realtime/v1/websocket?apikey={server.anon_key}&vsn=2.0.0"

    async def reply(ws, ref: str) -> dict:
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if frame[3] == "phx_reply" and frame[1] == ref:
                return frame[4]

    async def join(ws, token: str, private: bool = True, ref: str = "1") -> dict:
        config = {"broadcast": {"ack": True, "self": False}, "presence": {"key": "", "enabled": False}, "private": private,
                  "postgres_changes": []}
        await ws.send(json.dumps([ref, ref, topic, "phx_join", {"config": config, "access_token": token}]))
        return await reply(ws, ref)

    async def broadcasts(ws, seconds: float) -> list:
        got = []
        try:
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), seconds))
                if frame[3] == "broadcast":
                    got.append(frame[4])
        except asyncio.TimeoutError:
            return got

    async def scenario():
        async with websockets.connect(url) as admin, websockets.connect(url) as member, websockets.connect(url) as outsider:
            assert (await join(admin, _token(world["admin"])))["status"] == "ok"
            assert (await join(member, _token(world["member"])))["status"] == "ok"
            assert await join(outsider, _token(world["outsider"])) == {
                "status": "error",
                "response": {"reason": f"Unauthorized: You do not have permissions to read from this Channel topic: {group}"},
            }
            # The outsider may listen on the public channel of that name: it never hears the private one.
            assert (await join(outsider, _token(world["outsider"]), private=False, ref="2"))["status"] == "ok"
            await admin.send(json.dumps(["1", "3", topic, "broadcast",
                                         {"type": "broadcast", "event": "choosing", "payload": {"who": "admin"}}]))
            assert (await reply(admin, "3"))["status"] == "ok"
            assert await broadcasts(member, 2.0) == [{"type": "broadcast", "event": "choosing", "payload": {"who": "admin"}}]
            # REST broadcast: a member's private message reaches the members; an outsider's is refused, naming the topic.
            headers = {"apikey": server.anon_key, "Content-Type": "application/json"}
            message = {"topic": group, "event": "choosing", "payload": {"who": "rest"}, "private": True}
            sent = httpx.post(f"{server.url}/realtime/v1/api/broadcast", json={"messages": [message]},
                              headers={**headers, "Authorization": f"Bearer {_token(world['member'])}"})
            assert sent.status_code == 202, sent.text
            refused = httpx.post(f"{server.url}/realtime/v1/api/broadcast", json={"messages": [message]},
                                 headers={**headers, "Authorization": f"Bearer {_token(world['outsider'])}"})
            assert refused.status_code == 403
            assert refused.json()["message"] == f"Unauthorized: You do not have permissions to write to this Channel topic: {group}"
            assert await broadcasts(admin, 2.0) == [{"type": "broadcast", "event": "choosing", "payload": {"who": "rest"}}]
            # supabase-swift's httpSend (and its fallback when unsubscribed): `?private=true` on the per-event route.
            per_event = f"{server.url}/realtime/v1/api/broadcast/{group}/events/choosing?private=true"
            assert httpx.post(per_event, json={"who": "http-send"},
                              headers={**headers, "Authorization": f"Bearer {_token(world['member'])}"}).status_code == 202
            assert httpx.post(per_event, json={"who": "intruder"},
                              headers={**headers, "Authorization": f"Bearer {_token(world['outsider'])}"}).status_code == 403
            assert await broadcasts(admin, 2.0) == [{"type": "broadcast", "event": "choosing", "payload": {"who": "http-send"}}]
            assert await broadcasts(outsider, 0.5) == []

    asyncio.run(scenario())

"""GroupDecisions through CaravanClient: the `caravan-client` command (the SDK alone) pulls the
voter's decisions and notifications, and votes cast offline go through its outbox: one for an active decision is
applied on the server, one for a decision closed meanwhile is refused cleanly (parked with 42501, never retried).
Also `caravan import restaurants` on the real places.json (item 2), through the binary."""
from __future__ import annotations

import json
import os
import subprocess
import uuid

import httpx
import pytest
from supabase import create_client

from conftest import CARAVAN_BIN
from test_group_decisions import PASSWORD, _iso, _signed_up

CLIENT_BIN = CARAVAN_BIN.parent / "caravan-client"


def test_offline_votes_go_through_the_outbox_and_a_closed_decision_refuses_cleanly(server, service, tmp_path):
    env = {**os.environ, "CARAVAN_CLIENT_URL": server.url, "CARAVAN_CLIENT_APIKEY": server.anon_key,
           "CARAVAN_CLIENT_STORE": str(tmp_path / "voter.sqlite")}

    def client(*args: str) -> str:
        done = subprocess.run([str(CLIENT_BIN), *args], capture_output=True, text=True, timeout=300, env=env, check=False)
        assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout

    email = f"voter-{uuid.uuid4().hex[:10]}@example.com"
    voter_id = json.loads(client("sign-up", "--email", email, "--password", PASSWORD))["user_id"]
    token = httpx.post(f"{server.url}/auth/v1/token?grant_type=password", headers={"apikey": server.anon_key},
                       json={"email": email, "password": PASSWORD}, timeout=60).json()["access_token"]
    voter = create_client(server.url, server.anon_key)
    voter.postgrest.auth(token)
    voter.table("users").insert({"id": voter_id, "name": "Voter", "username": f"voter{uuid.uuid4().hex[:6]}"}).execute()

    admin, admin_id = _signed_up(server, "clientadmin")
    restaurants = [r["id"] for r in service.table("restaurants").insert(
        [{"google_place_id": f"client-{uuid.uuid4().hex}", "name": f"C{i}"} for i in range(3)]).execute().data]
    group = admin.rpc("create_group", {"name": "Client lunch"}).execute().data
    admin.rpc("add_member", {"group_id": group, "user_id": voter_id}).execute()
    collection = admin.table("collections").insert(
        {"name": "Client spots", "type": "group", "owner_id": admin_id, "group_id": group}).execute().data[0]["id"]
    admin.table("collection_restaurants").insert(
        [{"collection_id": collection, "restaurant_id": r, "position": i, "group_id": group} for i, r in enumerate(restaurants)]).execute()
    open_id, closing_id = (admin.rpc("create_decision", {
        "collection_id": collection, "method": "tiered", "deadline": _iso(3600), "visit_date": _iso(7200),
    }).execute().data for _ in range(2))

    tables = "collections,decisions,votes,notifications"
    client("sync", "--tables", tables, "--json")
    local_decisions = json.loads(client("rows", "decisions"))
    assert sorted(d["id"] for d in local_decisions) == sorted([open_id, closing_id])
    server_notifications = voter.table("notifications").select("*").execute().data
    assert len(server_notifications) >= 2  # decision started, twice
    assert sorted(n["id"] for n in json.loads(client("rows", "notifications"))) == sorted(n["id"] for n in server_notifications)

    # Offline: two votes queued locally; meanwhile the admin closes one of the decisions.
    for decision in (open_id, closing_id):
        client("insert", "votes", json.dumps({"decision_id": decision, "user_id": voter_id, "rankings": [restaurants[1], restaurants[0]]}))
    assert len(json.loads(client("outbox"))["pending"]) == 2
    admin.rpc("close_decision", {"decision_id": closing_id}).execute()

    report = json.loads(client("sync", "--tables", tables, "--json"))
    assert report["pushed"] == 1 and report["rejected"] == 1, report
    outbox = json.loads(client("outbox"))
    assert outbox["pending"] == [] and len(outbox["parked"]) == 1
    assert outbox["parked"][0]["error"]["code"] == "42501", outbox["parked"][0]
    stored = service.table("votes").select("*").eq("user_id", voter_id).execute().data
    assert [(v["decision_id"], v["rankings"]) for v in stored] == [(open_id, [restaurants[1], restaurants[0]])]
    assert [v["decision_id"] for v in json.loads(client("rows", "votes"))] == [open_id], "the refused vote is rolled back locally"
    assert json.loads(client("sync", "--tables", tables, "--json"))["rejected"] == 0, "a parked vote is never retried"


def test_caravan_import_restaurants_takes_the_real_places_file():
    """Item 2 through the binary: the counts are checked by an independent count of places.json here."""
    from collections import Counter

    from conftest import PLACES_JSON, _run
    from deployments import new_deployment

    if not PLACES_JSON.is_file():
        pytest.skip(f"needs {PLACES_JSON}")
    places = json.loads(PLACES_JSON.read_text())
    kinds = Counter(p.get("category_en") for p in places if p.get("category_en") in ("restaurant", "fast_food", "cafe"))
    deployment = new_deployment("caravan-restaurants-")
    try:
        done = _run("import", "restaurants", str(PLACES_JSON), *deployment.args, "--json")
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert summary["total"] == len(places)
        assert summary["by_kind"] == dict(kinds)
        assert summary["inserted"] == sum(kinds.values()) and summary["rejections"] == []
        assert summary["skipped"] == len(places) - sum(kinds.values())
        assert deployment.fetch_one("SELECT count(*) FROM restaurants WHERE rating IS NULL AND price_range IS NULL")[0] == sum(kinds.values())
        again = json.loads(_run("import", "restaurants", str(PLACES_JSON), *deployment.args, "--json").stdout)
        assert again["inserted"] == 0 and again["updated"] == sum(kinds.values())
    finally:
        deployment.remove()

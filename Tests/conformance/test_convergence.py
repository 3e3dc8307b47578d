"""The convergence suite in the conformance run: one short seeded run of scripts/convergence on this pass's engine
(N real clients, seeded workload and faults, then the checks; RELIABILITY.md has the long runs), and the regression
tests of what it found: an update or delete the server applies without changing a row (the row is gone, or the write
policy hides it from the writer) must not leave the device's copy as the device wrote it."""
from __future__ import annotations

import json
import os
import subprocess
import sys


from conftest import CARAVAN_BIN, REPO_ROOT
from deployments import ENGINE
from test_group_decisions import PASSWORD, _signed_up

CLIENT_BIN = CARAVAN_BIN.parent / "caravan-client"


def test_a_short_seeded_run_under_faults_converges(tmp_path):
    run = subprocess.run([sys.executable, str(REPO_ROOT / "Tests/convergence/harness.py"), "--engine", ENGINE, "--clients", "5",
                          "--seconds", "30", "--seed", "34", "--bin", str(CARAVAN_BIN), "--out", str(tmp_path / "run")],
                         capture_output=True, text=True, timeout=600, check=False)
    lines = run.stdout.strip().splitlines()
    assert lines, run.stderr[-3000:]
    summary = json.loads(lines[-1])
    assert summary["violations"] == 0 and run.returncode == 0, "\n".join(lines[:-1])[-6000:]
    # The run did what it claims: writes acknowledged and refused, RPCs, and faults of every family.
    assert summary["acknowledged"] > 20 and summary["rejected"] > 0 and summary["rpc_ok"] > 0, summary
    assert summary["realtime_events"] > 0 and summary["transactions_multi_row"] > 0, summary
    kinds = summary["faults_by_kind"]
    assert any(k.startswith("proxy-") for k in kinds) and kinds.get("clock-skew") == 5, kinds
    assert kinds.get("client-sigkill", 0) + sum(v for k, v in kinds.items() if k.startswith("crash-at-")) > 0, kinds
    assert summary["drain_max_seconds"] <= summary["drain_bound_seconds"]


class Device:
    def __init__(self, server, tmp_path, name: str) -> None:
        self.server = server
        self.env = {**os.environ, "CARAVAN_CLIENT_URL": server.url, "CARAVAN_CLIENT_APIKEY": server.anon_key,
                    "CARAVAN_CLIENT_STORE": str(tmp_path / f"{name}.sqlite")}

    def __call__(self, *args: str) -> str:
        done = subprocess.run([str(CLIENT_BIN), *args], capture_output=True, text=True, timeout=300, env=self.env, check=False)
        assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def sign_in(self, email: str) -> None:
        self("sign-in", "--email", email, "--password", PASSWORD)


def test_an_offline_update_of_a_row_deleted_meanwhile_leaves_no_ghost(server, tmp_path):
    user, user_id = _signed_up(server, "ghost")
    device = Device(server, tmp_path, "ghost")
    device.sign_in(user.auth.get_user().user.email)
    place = server.places[0]["id"]
    favorite = user.table("favorites").insert({"user_id": user_id, "place_id": place, "note": "first"}).execute().data[0]["id"]
    device("sync", "--tables", "favorites", "--json")
    device("update", "favorites", json.dumps({"id": favorite}), json.dumps({"note": "edited offline"}))
    user.table("favorites").delete().eq("id", favorite).execute()          # another device deletes it meanwhile
    report = json.loads(device("sync", "--tables", "favorites", "--json"))
    assert report["pushed"] == 1 and report["rejected"] == 0                # applied: an update of a row that is gone
    assert json.loads(device("rows", "favorites")) == [], "the row is gone on the server, so it is gone here"
    assert user.table("favorites").select("*").execute().data == []


def test_a_members_update_the_write_policy_ignores_is_read_back(server, service, tmp_path):
    admin, admin_id = _signed_up(server, "convadmin")
    member, member_id = _signed_up(server, "convmember")
    group = admin.rpc("create_group", {"name": "Convergence"}).execute().data
    admin.rpc("add_member", {"group_id": group, "user_id": member_id}).execute()
    collection = admin.table("collections").insert({"name": "Admin's name", "type": "group", "owner_id": admin_id, "group_id": group}).execute().data[0]["id"]
    device = Device(server, tmp_path, "member")
    device.sign_in(member.auth.get_user().user.email)
    device("sync", "--tables", "collections", "--json")
    device("update", "collections", json.dumps({"id": collection}), json.dumps({"name": "Member's name"}))
    device("delete", "collections", json.dumps({"id": collection}))
    report = json.loads(device("sync", "--tables", "collections", "--json"))
    assert report["rejected"] == 0, "the update policy hides the row from a member: applied, changing nothing"
    local = json.loads(device("rows", "collections"))
    assert [(c["id"], c["name"]) for c in local] == [(collection, "Admin's name")], "the device shows the server's row"
    assert service.table("collections").select("name").eq("id", collection).execute().data == [{"name": "Admin's name"}]

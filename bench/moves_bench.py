"""Visibility moves against a running `caravan serve` with the group_decisions app.

    python bench/moves_bench.py URL ANON_KEY SERVICE_KEY [--rounds N]

A group holds 1,000 rows over three synced tables (100 collections, 600 collection_restaurants, 300 decisions). Each
round a user is added to the group and pulls from their cursor until `has_more:false` (the rows move in; from round 2
on, the pull also carries the 1,000 changes made to the group's rows while the user was outside, now visible), beside
a fresh snapshot of the same tables by the same user; then the user is removed and pulls again (the rows move out);
then the user joins again with nothing changed in between (a quiet join: only the moved rows travel) and is removed.
Also: a delta pull of 1,000 changes to the group's rows (300 decisions, 600 collection_restaurants, 100 collections) by
a user outside the group (no change concerns them); and, when the deployment holds 1,000 places or more, an anon delta
pull of 1,000 changes to places (a rule on the row's own columns).
Prints one JSON object of medians (seconds) and counts."""
from __future__ import annotations

import json
import statistics
import sys
import time
import uuid

import httpx
from group_rows import group_with_1000_rows

TABLES = "collections,collection_restaurants,decisions"


def main() -> None:
    url, anon, service = sys.argv[1:4]
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 5
    client = httpx.Client(base_url=url, timeout=600)
    service_headers = {"apikey": service, "Authorization": f"Bearer {service}", "Prefer": "return=representation"}

    def sign_up(name: str) -> tuple[str, dict]:
        r = client.post("/auth/v1/signup", headers={"apikey": anon}, json={"email": f"{name}-{uuid.uuid4().hex[:8]}@example.com", "password": "bench password 1"})
        r.raise_for_status()
        body = r.json()
        user_id = body["user"]["id"]
        client.post("/rest/v1/users", headers=service_headers, json={"id": user_id, "name": name, "username": f"{name}{uuid.uuid4().hex[:6]}"}).raise_for_status()
        return user_id, {"apikey": anon, "Authorization": f"Bearer {body['access_token']}"}

    def pull(headers: dict, cursor: str | None, tables: str = TABLES) -> tuple[str, dict[str, int]]:
        counts: dict[str, int] = {}
        while True:
            params = {"tables": tables, "limit": 1000}
            if cursor:
                params["cursor"] = cursor
            r = client.get("/sync/v1/pull", params=params, headers=headers)
            r.raise_for_status()
            body = r.json()
            for change in body["changes"]:
                counts[change["op"]] = counts.get(change["op"], 0) + 1
            cursor = body["cursor"]
            if not body["has_more"]:
                return cursor, counts

    admin_id, admin = sign_up("benchadmin")
    group = group_with_1000_rows(client, admin, admin_id, service_headers, "Bench")

    joiner_id, joiner = sign_up("benchjoiner")
    outsider_id, outsider = sign_up("benchoutsider")
    cursor, _ = pull(joiner, None)
    outsider_cursor, _ = pull(outsider, None)
    join, snapshot, leave, unconcerned, quiet_join = [], [], [], [], []
    moved_in = moved_out = quiet_moved_in = 0
    for i in range(rounds):
        client.post("/rest/v1/rpc/add_member", headers=admin, json={"group_id": group, "user_id": joiner_id}).raise_for_status()
        start = time.perf_counter()
        cursor, counts = pull(joiner, cursor)
        join.append(time.perf_counter() - start)
        moved_in = counts.get("upsert", 0)
        start = time.perf_counter()
        _, fresh = pull(joiner, None)
        snapshot.append(time.perf_counter() - start)
        assert fresh.get("upsert", 0) >= 1000, fresh
        client.delete("/rest/v1/group_members", params={"group_id": f"eq.{group}", "user_id": f"eq.{joiner_id}"}, headers=admin).raise_for_status()
        start = time.perf_counter()
        cursor, counts = pull(joiner, cursor)
        leave.append(time.perf_counter() - start)
        moved_out = counts.get("evict", 0)
        # The same join on a quiet group (nothing changed since the removal): only the moved rows travel.
        client.post("/rest/v1/rpc/add_member", headers=admin, json={"group_id": group, "user_id": joiner_id}).raise_for_status()
        start = time.perf_counter()
        cursor, counts = pull(joiner, cursor)
        quiet_join.append(time.perf_counter() - start)
        quiet_moved_in = counts.get("upsert", 0)
        client.delete("/rest/v1/group_members", params={"group_id": f"eq.{group}", "user_id": f"eq.{joiner_id}"}, headers=admin).raise_for_status()
        cursor, _ = pull(joiner, cursor)
        # 1,000 changes the outsider cannot see, and no membership of theirs.
        r = client.patch("/rest/v1/decisions", params={"group_id": f"eq.{group}"}, headers=service_headers,
                         json={"reasoning": f"round {i}"})
        r.raise_for_status()
        client.patch("/rest/v1/collection_restaurants", params={"group_id": f"eq.{group}"}, headers=service_headers,
                     json={"added_at": f"2026-01-0{1 + i % 9}T00:00:00Z"}).raise_for_status()
        client.patch("/rest/v1/collections", params={"group_id": f"eq.{group}", "name": "neq.x"}, headers=service_headers,
                     json={"description": f"round {i}"}).raise_for_status()
        start = time.perf_counter()
        outsider_cursor, counts = pull(outsider, outsider_cursor)
        unconcerned.append(time.perf_counter() - start)
        assert not counts, counts
    # The delta of 1,000 changes to places (a rule on the row's own columns, no other table), as anon: the path
    # every app's public tables take, to show the moves cost it nothing.
    places_delta = []
    ids = [r["id"] for r in client.get("/rest/v1/places", params={"select": "id", "order": "id", "limit": 1000}, headers=service_headers).json()]
    if len(ids) == 1000:
        anon_headers = {"apikey": anon}
        places_cursor = None
        while True:
            params = {"tables": "places", "limit": 10000, **({"cursor": places_cursor} if places_cursor else {})}
            body = client.get("/sync/v1/pull", params=params, headers=anon_headers).json()
            places_cursor = body["cursor"]
            if not body["has_more"]:
                break
        id_filter = "in.(" + ",".join(ids) + ")"
        for i in range(rounds * 2):
            client.patch("/rest/v1/places", params={"id": id_filter}, json={"name_en": f"bench round {i}"}, headers=service_headers).raise_for_status()
            start = time.perf_counter()
            places_cursor, counts = pull(anon_headers, places_cursor, tables="places")
            places_delta.append(time.perf_counter() - start)
            assert counts == {"upsert": 1000}, counts
    print(json.dumps({
        "rounds": rounds, "rows_in_group": 1000, "moved_in_upserts": moved_in, "moved_out_evicts": moved_out,
        "join_to_converged_s": round(statistics.median(join), 4), "fresh_snapshot_s": round(statistics.median(snapshot), 4),
        "removal_to_converged_s": round(statistics.median(leave), 4),
        "quiet_join_moved_in_upserts": quiet_moved_in, "quiet_join_to_converged_s": round(statistics.median(quiet_join), 4),
        "unconcerned_delta_of_1000_changes_s": round(statistics.median(unconcerned), 4),
        "places_delta_of_1000_changes_s": round(statistics.median(places_delta), 4) if places_delta else None,
    }))


if __name__ == "__main__":
    main()

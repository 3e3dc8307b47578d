"""The group both moves benches use: 1,000 rows over three synced tables of the group_decisions app."""
from __future__ import annotations

import uuid

import httpx


def group_with_1000_rows(client: httpx.Client, admin: dict, admin_id: str, service_headers: dict, name: str) -> str:
    """A group of `admin` (created through `create_group`) holding 100 collections, 600 collection_restaurants (six
    restaurants in each) and 300 decisions; returns the group's id. `service_headers` must ask for
    `return=representation`."""
    group = client.post("/rest/v1/rpc/create_group", headers=admin, json={"name": name}).json()
    restaurants = [r["id"] for r in client.post("/rest/v1/restaurants", headers=service_headers,
                                                 json=[{"google_place_id": f"bench-{uuid.uuid4().hex}", "name": f"R{i}"} for i in range(6)]).json()]
    collections = [r["id"] for r in client.post("/rest/v1/collections", headers=service_headers, json=[
        {"name": f"C{i}", "type": "group", "owner_id": admin_id, "group_id": group} for i in range(100)]).json()]
    client.post("/rest/v1/collection_restaurants", headers=service_headers, json=[
        {"collection_id": c, "restaurant_id": r, "position": p + 1, "group_id": group} for c in collections for p, r in enumerate(restaurants)]).raise_for_status()
    client.post("/rest/v1/decisions", headers=service_headers, json=[
        {"type": "group", "collection_id": collections[i % 100], "group_id": group, "created_by": admin_id, "method": "tiered",
         "visit_date": "2030-01-01T12:00:00Z"} for i in range(300)]).raise_for_status()
    return group

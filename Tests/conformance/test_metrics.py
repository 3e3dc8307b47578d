"""`GET /metrics` of a real `caravan serve`, read by the Prometheus text parser of `prometheus_client`: every family
Docs/operations.md lists is there, each parses, and the figures move with traffic (REST reads and writes, sync, auth)."""

from __future__ import annotations

import uuid

import httpx
from prometheus_client.parser import text_string_to_metric_families

from test_realtime import admin_token, jwt_secret  # noqa: F401  (fixtures the realtime test below uses)

FAMILIES = {
    "caravan_http_requests": "counter",
    "caravan_http_request_duration_seconds": "histogram",
    "caravan_write_transactions": "counter",
    "caravan_write_transaction_duration_seconds": "histogram",
    "caravan_changelog_head_seq": "gauge",
    "caravan_db_connections_in_use": "gauge",
    "caravan_db_connections_waiting": "gauge",
    "caravan_db_acquire_duration_seconds": "histogram",
    "caravan_sync_pulls": "counter",
    "caravan_auth_failures": "counter",
}


def scrape(server) -> dict[str, object]:
    r = httpx.get(f"{server.url}/metrics", headers={"apikey": server.service_role_key}, timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {family.name: family for family in text_string_to_metric_families(r.text)}


def value(families, name: str, sample: str | None = None, **labels: str) -> float:
    """The sum of the samples named `sample` (default: the family's own) of family `name` whose labels include `labels`."""
    family = families.get(name)
    if family is None:
        return 0.0
    wanted = sample or (name + "_total" if family.type == "counter" else name)
    return sum(s.value for s in family.samples if s.name == wanted and all(s.labels.get(k) == v for k, v in labels.items()))


def test_metrics_are_refused_without_the_service_key(server):
    assert httpx.get(f"{server.url}/metrics", timeout=30).status_code == 401
    anon = httpx.get(f"{server.url}/metrics", headers={"apikey": server.anon_key}, timeout=30)
    assert anon.status_code == 401 and anon.json()["code"] == "42501"


def test_metrics_parse_and_follow_the_traffic(server):
    before = scrape(server)
    for name, kind in FAMILIES.items():
        if name in before:
            assert before[name].type == kind, (name, before[name].type)
    reads = dict(name="caravan_http_requests", route="/rest/v1/{table}", method="GET", status="200")
    rest = httpx.Client(base_url=server.rest_url, headers={"apikey": server.service_role_key}, timeout=30)
    for _ in range(3):
        assert rest.get("/places", params={"select": "id", "limit": 1}).status_code == 200
    category = f"metrics-{uuid.uuid4().hex[:8]}"
    assert rest.post("/categories", json={"id": category, "name_ar": "م", "name_en": "Metrics"}).status_code == 201
    assert rest.delete("/categories", params={"id": f"eq.{category}"}).status_code == 204
    pulled = httpx.get(f"{server.url}/sync/v1/pull", params={"tables": "categories", "limit": 1},
                       headers={"apikey": server.anon_key}, timeout=30)
    assert pulled.status_code == 200
    refused = httpx.post(f"{server.url}/auth/v1/token", params={"grant_type": "password"}, headers={"apikey": server.anon_key},
                         json={"email": f"nobody-{uuid.uuid4().hex[:8]}@example.com", "password": "wrong-password-1"}, timeout=30)
    assert refused.status_code == 400 and refused.json()["code"] == "invalid_credentials"

    after = scrape(server)
    for name, kind in FAMILIES.items():
        assert name in after, f"{name} missing from /metrics"
        assert after[name].type == kind, (name, after[name].type)
    labels = {k: v for k, v in reads.items() if k != "name"}
    assert value(after, "caravan_http_requests", **labels) >= value(before, "caravan_http_requests", **labels) + 3
    duration = "caravan_http_request_duration_seconds"
    assert value(after, duration, duration + "_count", **labels) >= value(before, duration, duration + "_count", **labels) + 3
    assert value(after, duration, duration + "_bucket", le="+Inf", **labels) == value(after, duration, duration + "_count", **labels)
    assert value(after, "caravan_write_transactions", outcome="committed") >= value(before, "caravan_write_transactions", outcome="committed") + 2
    assert value(after, "caravan_changelog_head_seq") > value(before, "caravan_changelog_head_seq")
    assert value(after, "caravan_sync_pulls", status="200") >= value(before, "caravan_sync_pulls", status="200") + 1
    assert value(after, "caravan_auth_failures", route="/auth/v1/token", kind="invalid_credentials") >= 1 + value(
        before, "caravan_auth_failures", route="/auth/v1/token", kind="invalid_credentials")
    acquired = "caravan_db_acquire_duration_seconds"
    assert value(after, acquired, acquired + "_count") > value(before, acquired, acquired + "_count")
    assert value(after, "caravan_db_connections_in_use") >= 0 and value(after, "caravan_db_connections_waiting") >= 0


def test_realtime_figures_follow_sockets_channels_and_events(server, admin_token):
    """Open sockets and joined channels are gauges that rise with a subscription and fall when it
    closes; events sent is a counter that grows with each delivered change."""
    from test_realtime import eventually, new_place, rest, run, subscribed

    before = scrape(server)
    category = f"metrics-{uuid.uuid4().hex[:8]}"

    async def scenario():
        events: list = []
        client, _ = await subscribed(server, None, "metrics-places", [
            {"event": "INSERT", "table": "places", "filter": f"category=eq.{category}"}], events)
        during = scrape(server)
        assert value(during, "caravan_realtime_sockets") >= value(before, "caravan_realtime_sockets") + 1
        assert value(during, "caravan_realtime_channels") >= value(before, "caravan_realtime_channels") + 1
        row = new_place(category)
        with rest(server, admin_token) as http:
            assert http.post("/places", json=row).status_code == 201
        try:
            await eventually(lambda: len(events) == 1)
        finally:
            # The server is shared: other tests count its places against the real places file.
            with rest(server, admin_token) as http:
                assert http.delete(f"/places?id=eq.{row['id']}").status_code in (200, 204)
        await eventually(lambda: value(scrape(server), "caravan_realtime_events_sent") >= value(before, "caravan_realtime_events_sent") + 1)
        await client.close()
        await eventually(lambda: value(scrape(server), "caravan_realtime_sockets") <= value(during, "caravan_realtime_sockets") - 1)

    run(scenario())
    families = scrape(server)
    for name, kind in [("caravan_realtime_sockets", "gauge"), ("caravan_realtime_channels", "gauge"),
                       ("caravan_realtime_events_sent", "counter"), ("caravan_realtime_resyncs", "counter")]:
        assert families[name].type == kind, name

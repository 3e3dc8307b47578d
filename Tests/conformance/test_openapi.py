"""The OpenAPI description at the root of /rest/v1 (PostgREST's Swagger 2.0 shape), checked against the API it
describes: every path answers, every column it lists can be selected and is what a row holds, every reference
resolves, read-only functions answer GET with the arguments it says are required, and a caller sees only the tables
it has a policy on."""

from __future__ import annotations

from typing import Any

import httpx
import pytest


def _document(server, key: str) -> dict[str, Any]:
    answer = httpx.get(f"{server.rest_url}/", headers={"apikey": key, "Authorization": f"Bearer {key}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/openapi+json")
    return answer.json()


def _refs(node: Any):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def test_without_a_key_the_root_is_refused_in_postgrest_shape(bare_http):
    answer = bare_http.get("/")
    assert answer.status_code == 401
    assert set(answer.json()) >= {"code", "message"}


def test_the_service_role_document_describes_the_api_it_serves(server):
    key = server.service_role_key
    document = _document(server, key)
    assert document["swagger"] == "2.0" and document["basePath"] == "/rest/v1"
    for ref in _refs(document):
        section, name = ref.removeprefix("#/").split("/", 1)
        assert name in document[section], ref
    headers = {"apikey": key, "Authorization": f"Bearer {key}"}
    tables = [path[1:] for path in document["paths"] if path != "/" and not path.startswith("/rpc/")]
    assert "places" in tables and "favorites" in tables
    with httpx.Client(base_url=server.rest_url, headers=headers, timeout=30) as client:
        for table in tables:
            columns = list(document["definitions"][table]["properties"])
            answer = client.get(f"/{table}", params={"select": ",".join(columns), "limit": "1"})
            assert answer.status_code == 200, (table, answer.text)
            row = client.get(f"/{table}", params={"limit": "1"}).json()
            if row:
                assert set(row[0]) == set(columns), table
        places = document["definitions"]["places"]
        assert "id" in places["required"] and "Primary Key" in places["properties"]["id"]["description"]
        assert places["properties"]["name_ar"]["type"] == "string"
        # A read-only function answers GET with exactly the arguments the document requires.
        nearby = document["paths"]["/rpc/nearby_places"]["get"]["parameters"]
        required = {p["name"]: p for p in nearby if p["required"]}
        assert set(required) == {"lat", "lng"} and required["lat"]["type"] == "number"
        assert client.get("/rpc/nearby_places", params={"lat": "24.7", "lng": "46.7"}).status_code == 200
        missing = client.get("/rpc/nearby_places", params={"lat": "24.7"})
        assert missing.status_code >= 400


@pytest.mark.parametrize("method", ["get", "head"])
def test_anon_sees_only_the_tables_it_has_a_policy_on(server, method):
    document = _document(server, server.anon_key) if method == "get" else None
    if method == "head":
        answer = httpx.head(f"{server.rest_url}/", headers={"apikey": server.anon_key}, timeout=30)
        assert answer.status_code == 200 and answer.content == b""
        return
    tables = {path[1:] for path in document["paths"] if path != "/" and not path.startswith("/rpc/")}
    assert "places" in tables
    assert "favorites" not in tables
    service = _document(server, server.service_role_key)
    assert tables < {path[1:] for path in service["paths"] if path != "/" and not path.startswith("/rpc/")}


def test_the_servers_root_says_where_each_api_lives_without_a_key(server):
    index = httpx.get(f"{server.url}/", timeout=30)
    assert index.status_code == 200 and index.headers["content-type"].startswith("application/json")
    body = index.json()
    assert body["rest"] == "/rest/v1/" and body["console"] == "/admin"
    assert "caravan keys" in body["keys"]
    for api in ["rest", "storage"]:
        # Each path it names is served (refused without a key in its client's shape, never 404).
        assert httpx.get(f"{server.url}{body[api]}", timeout=30).status_code in (200, 400, 401)
    assert httpx.get(f"{server.url}{body['health']}", timeout=30).json() == {"status": "ok"}
    assert httpx.get(f"{server.url}{body['console']}", timeout=30).status_code == 200

"""Writes, policies and RPC through the official Python client (postgrest-py from supabase==2.34.1)."""
from __future__ import annotations

import time
import uuid

import httpx
import pytest
from postgrest.exceptions import APIError
from postgrest.types import CountMethod, ReturnMethod
from supabase import Client, create_client

from test_rest import _mint, jwt_secret  # noqa: F401  (shared token minting and secret fixture)


@pytest.fixture(scope="module")
def secret(jwt_secret):
    return jwt_secret


def _client(server, token: str) -> Client:
    client = create_client(server.url, server.anon_key)
    client.postgrest.auth(token)
    return client


@pytest.fixture(scope="module")
def admin_token(secret) -> str:
    return _mint(secret, role="authenticated", sub=str(uuid.uuid4()), app_metadata={"role": "admin"})


@pytest.fixture(scope="module")
def admin(server, admin_token) -> Client:
    return _client(server, admin_token)


@pytest.fixture(scope="module")
def user(server, secret) -> Client:
    return _client(server, _mint(secret, role="authenticated", sub=str(uuid.uuid4()), app_metadata={}))


@pytest.fixture(scope="module")
def service(server) -> Client:
    return create_client(server.url, server.service_role_key)


def _category_id() -> str:
    return f"conformance-{uuid.uuid4().hex[:8]}"


def test_admin_insert_returns_the_stored_row(admin):
    cid = _category_id()
    result = admin.table("categories").insert({"id": cid, "name_ar": "تجربة", "name_en": "Test"}).execute()
    assert result.data == [{"id": cid, "name_ar": "تجربة", "name_en": "Test", "icon": None, "emoji": None,
                            "color": None, "sort_order": 0, "places_count": 0}]


def test_minimal_insert_returns_nothing(admin, service):
    cid = _category_id()
    result = admin.table("categories").insert({"id": cid, "name_ar": "x", "name_en": "x"}, returning=ReturnMethod.minimal).execute()
    assert result.data == []
    assert service.table("categories").select("id").eq("id", cid).execute().data == [{"id": cid}]


def test_bulk_insert_with_default_to_null_false(admin):
    ids = [_category_id(), _category_id()]
    rows = [{"id": ids[0], "name_ar": "a", "name_en": "A", "sort_order": 5}, {"id": ids[1], "name_ar": "b", "name_en": "B"}]
    result = admin.table("categories").insert(rows, default_to_null=False).execute()
    assert [r["sort_order"] for r in result.data] == [5, 0]


def test_upsert_updates_then_inserts(server, admin, admin_token):
    cid = _category_id()
    admin.table("categories").insert({"id": cid, "name_ar": "a", "name_en": "A"}).execute()
    updated = admin.table("categories").upsert({"id": cid, "name_ar": "b", "name_en": "B"}, on_conflict="id").execute()
    assert updated.data[0]["name_en"] == "B"
    headers = {"apikey": server.anon_key, "Authorization": f"Bearer {admin_token}",
               "Prefer": "resolution=merge-duplicates,return=minimal", "Content-Type": "application/json"}
    status_update = httpx.post(f"{server.rest_url}/categories?on_conflict=id", headers=headers,
                               json={"id": cid, "name_ar": "c", "name_en": "C"}).status_code
    status_insert = httpx.post(f"{server.rest_url}/categories?on_conflict=id", headers=headers,
                               json={"id": _category_id(), "name_ar": "c", "name_en": "C"}).status_code
    assert (status_update, status_insert) == (200, 201)


def test_update_and_delete_with_counts(admin, service):
    cid = _category_id()
    admin.table("categories").insert({"id": cid, "name_ar": "a", "name_en": "A"}).execute()
    updated = admin.table("categories").update({"icon": "cup"}, count=CountMethod.exact).eq("id", cid).execute()
    assert updated.count == 1 and updated.data[0]["icon"] == "cup"
    deleted = admin.table("categories").delete(count=CountMethod.exact).eq("id", cid).execute()
    assert deleted.count == 1 and deleted.data[0]["id"] == cid
    assert service.table("categories").select("id").eq("id", cid).execute().data == []


def test_policies_refuse_anon_and_non_admin_writes(anon, user, admin, service):
    with pytest.raises(APIError) as refused:
        anon.table("categories").insert({"id": _category_id(), "name_ar": "a", "name_en": "A"}).execute()
    assert refused.value.code == "42501"
    with pytest.raises(APIError) as forbidden:
        user.table("categories").insert({"id": _category_id(), "name_ar": "a", "name_en": "A"}).execute()
    assert forbidden.value.code == "42501"
    cid = _category_id()
    admin.table("categories").insert({"id": cid, "name_ar": "a", "name_en": "A"}).execute()
    assert user.table("categories").update({"name_en": "hacked"}).eq("id", cid).execute().data == []
    assert user.table("categories").delete().eq("id", cid).execute().data == []
    assert service.table("categories").select("name_en").eq("id", cid).execute().data == [{"name_en": "A"}]


def test_users_see_only_their_favorites(user, service):
    # favorites need a users row (auth arrives later): the user's insert is checked by policy, then by the FK.
    with pytest.raises(APIError) as missing_user:
        user.table("favorites").insert({"user_id": str(uuid.uuid4()), "place_id": "kudu"}).execute()
    assert missing_user.value.code == "42501"
    assert user.table("favorites").select("*").execute().data == []


def test_constraint_errors(service, places):
    existing = places[0]["id"]
    cases = [
        ({"id": existing, "name_ar": "x", "category": "c", "category_ar": "c"}, "23505"),
        ({"id": f"conf-{uuid.uuid4().hex[:6]}", "category": "c", "category_ar": "c"}, "23502"),
        ({"id": f"conf-{uuid.uuid4().hex[:6]}", "name_ar": "x", "category": "c", "category_ar": "c", "latitude": 10, "longitude": 46}, "23514"),
        ({"id": f"conf-{uuid.uuid4().hex[:6]}", "name_ar": "x", "category": "c", "category_ar": "c", "price_range": "$$$$$"}, "23514"),
        ({"id": f"conf-{uuid.uuid4().hex[:6]}", "name_ar": "x", "category": "c", "category_ar": "c", "nope": 1}, "PGRST204"),
    ]
    for row, code in cases:
        with pytest.raises(APIError) as error:
            service.table("places").insert(row).execute()
        assert error.value.code == code, row
    stranger = str(uuid.uuid4())
    with pytest.raises(APIError) as fk:
        service.table("favorites").insert({"user_id": stranger, "place_id": "kudu"}).execute()
    assert fk.value.code == "23503"
    # PostgreSQL's words on both engines: which key has no parent row.
    assert fk.value.message == 'insert or update on table "favorites" violates foreign key constraint "favorites_user_id_fkey"'
    assert fk.value.details == f'Key (user_id)=({stranger}) is not present in table "auth_users".'


def test_filterless_delete_is_refused(service):
    with pytest.raises(APIError) as error:
        service.table("categories").delete().execute()
    assert error.value.code == "21000"


def test_rpc_scalar_set_and_void(anon, admin, places):
    cafes = sum(1 for p in places if p["category"] == "cafe")
    assert anon.rpc("count_places", {"cat": "cafe"}).execute().data == cafes
    rows = anon.rpc("places_in_category", {"cat": "cafe"}).select("id").order("id").limit(3).execute().data
    assert rows == [{"id": p} for p in sorted(p["id"] for p in places if p["category"] == "cafe")[:3]]
    assert admin.rpc("refresh_category_counts", {}).execute().data in (None, [], "")
    with pytest.raises(APIError) as unknown:
        anon.rpc("no_such_function", {}).execute()
    assert unknown.value.code == "PGRST202"

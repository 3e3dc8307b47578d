"""Resource embedding through supabase-py: one-to-many as arrays, many-to-one as objects, the
embedded table's policy inside the embed, !inner, filters / order / limit on the embedded resource, nested
embeddings, and PostgREST's PGRST200 for a resource without a relationship. Expected values come from plain reads
of each table, not from the embedding itself."""
from __future__ import annotations

import uuid

import pytest
from postgrest.exceptions import APIError
from supabase import Client, create_client

PASSWORD = "conformance-pass-7"


def _signed_up(server) -> tuple[Client, str]:
    client = create_client(server.url, server.anon_key)
    response = client.auth.sign_up({"email": f"embed-{uuid.uuid4().hex[:10]}@example.com", "password": PASSWORD})
    assert response.session is not None and response.user is not None
    client.postgrest.auth(response.session.access_token)
    return client, response.user.id


@pytest.fixture(scope="module")
def people(server, places):
    """Two signed-up users, each with a favorite and a review of two real places."""
    chosen = sorted(p["id"] for p in places)[:2]
    result = []
    for rating in (5, 2):
        client, user_id = _signed_up(server)
        for place_id in chosen:
            client.table("favorites").insert({"user_id": user_id, "place_id": place_id}).execute()
            client.table("reviews").insert({"user_id": user_id, "place_id": place_id, "rating": rating}).execute()
        result.append((client, user_id))
    return {"places": chosen, "users": result}


def test_one_to_many_is_an_array_of_the_rows_the_table_itself_returns(server, people):
    anon = create_client(server.url, server.anon_key)
    first, second = people["places"]
    rows = anon.table("places").select("id, reviews(*)").in_("id", [first, second]).order("id").execute().data
    assert [r["id"] for r in rows] == [first, second]
    for row in rows:
        direct = anon.table("reviews").select("*").eq("place_id", row["id"]).order("id").execute().data
        assert row["reviews"] == direct
        assert len(direct) >= 2


def test_many_to_one_is_an_object(server, people):
    client, user_id = people["users"][0]
    rows = client.table("reviews").select("rating, spot:places(id, name_ar)").eq("user_id", user_id).order("place_id").execute().data
    expected = client.table("places").select("id, name_ar").in_("id", people["places"]).order("id").execute().data
    assert [r["spot"] for r in rows] == expected
    assert {r["rating"] for r in rows} == {5}


def test_the_embedded_tables_policy_applies_inside_the_embed(server, people):
    (alice, alice_id), (bob, bob_id) = people["users"]
    for client, user_id in ((alice, alice_id), (bob, bob_id)):
        rows = client.table("places").select("id, favorites(user_id)").in_("id", people["places"]).execute().data
        assert rows and all(fav["user_id"] == user_id for r in rows for fav in r["favorites"])
        assert all(len(r["favorites"]) == 1 for r in rows)
    anon = create_client(server.url, server.anon_key)
    rows = anon.table("places").select("id, favorites(id)").in_("id", people["places"]).execute().data
    assert all(r["favorites"] == [] for r in rows)
    # !inner keeps only the places whose embed is not empty: alice's two favorites.
    inner = alice.table("places").select("id, favorites!inner(id)").execute().data
    assert sorted(r["id"] for r in inner) == people["places"]


def test_filters_order_and_limit_of_the_embedded_resource(server, people):
    anon = create_client(server.url, server.anon_key)
    first = people["places"][0]
    top = (anon.table("places").select("id, reviews(rating)").eq("id", first)
           .order("rating", desc=True, foreign_table="reviews").limit(1, foreign_table="reviews").execute().data)
    best = max(r["rating"] for r in anon.table("reviews").select("rating").eq("place_id", first).execute().data)
    assert top == [{"id": first, "reviews": [{"rating": best}]}]
    low = anon.table("places").select("id, reviews(rating)").eq("id", first).lte("reviews.rating", 2).execute().data
    assert low[0]["reviews"] and all(r["rating"] <= 2 for r in low[0]["reviews"])
    either = (anon.table("places").select("id, reviews(rating)").eq("id", first)
              .or_("rating.eq.5,rating.eq.2", reference_table="reviews").execute().data)
    direct = anon.table("reviews").select("rating").eq("place_id", first).in_("rating", [5, 2]).execute().data
    assert sorted(r["rating"] for r in either[0]["reviews"]) == sorted(r["rating"] for r in direct) and direct


def test_nested_embedding(server, people):
    client, user_id = people["users"][1]
    rows = client.table("reviews").select("rating, places(id, favorites(user_id))").eq("user_id", user_id).execute().data
    assert rows and all(r["places"]["favorites"] == [{"user_id": user_id}] for r in rows)


def test_a_resource_without_a_relationship_is_pgrst200(server):
    anon = create_client(server.url, server.anon_key)
    with pytest.raises(APIError) as refused:
        anon.table("places").select("id, nowhere(*)").execute()
    assert refused.value.code == "PGRST200"
    assert "nowhere" in refused.value.message

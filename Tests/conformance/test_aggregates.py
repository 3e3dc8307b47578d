"""PostgREST 12 aggregates through supabase-py: `count()`, `col.sum()`, `avg`, `min`, `max`, aliases,
casts and the implicit GROUP BY, on a server started with CARAVAN_AGGREGATES_ENABLED=true; PGRST123 on one started
without it. Every expected value comes from a plain read of the same rows by the same caller, computed here."""
from __future__ import annotations

import json
import uuid
from collections import defaultdict

import pytest
from postgrest.exceptions import APIError
from supabase import Client, create_client

from conftest import PLACES_JSON, _run, auth_environment, serving
from deployments import new_deployment

PASSWORD = "conformance-pass-7"
SUBSET = 400


@pytest.fixture(scope="module")
def deployment(places_source, tmp_path_factory):
    """A deployment holding the first places of places.json (every category they have, several per category)."""
    subset = tmp_path_factory.mktemp("aggregates") / "places.json"
    subset.write_text(json.dumps(places_source[:SUBSET], ensure_ascii=False))
    deployment = new_deployment("caravan-aggregates-")
    try:
        imported = _run("import", "places", str(subset), *deployment.args, "--json")
        assert imported.returncode == 0, f"import failed:\n{imported.stdout}\n{imported.stderr}"
        keys = _run("keys", *deployment.args, "--json")
        assert keys.returncode == 0, keys.stderr
        yield deployment, json.loads(keys.stdout)
    finally:
        deployment.remove()


def test_aggregates_are_refused_while_off(deployment, apple_issuer):
    target, keys = deployment
    with serving(target, auth_environment(apple_issuer), "off.log") as (_, url):
        anon = create_client(url, keys["anon_key"])
        for select in ("count()", "category, count()", "id, reviews(rating.avg())"):
            with pytest.raises(APIError) as error:
                anon.table("places").select(select).execute()
            assert error.value.code == "PGRST123", select
            assert error.value.message == "Use of aggregate functions is not allowed"


@pytest.fixture(scope="module")
def agg_server(deployment, apple_issuer):
    target, keys = deployment
    env = auth_environment(apple_issuer, CARAVAN_AGGREGATES_ENABLED="true")
    with serving(target, env, "on.log") as (_, url):
        yield url, keys


@pytest.fixture(scope="module")
def people(agg_server):
    """Two signed-up users with favorites and reviews of the first places (favorites are owner-only)."""
    url, keys = agg_server
    service = create_client(url, keys["service_role_key"])
    chosen = [r["id"] for r in service.table("places").select("id").order("id").limit(3).execute().data]
    result = []
    for ratings in ((5, 4, 3), (2, 1)):
        client = create_client(url, keys["anon_key"])
        signed = client.auth.sign_up({"email": f"agg-{uuid.uuid4().hex[:10]}@example.com", "password": PASSWORD})
        client.postgrest.auth(signed.session.access_token)
        for place_id, rating in zip(chosen, ratings):
            client.table("favorites").insert({"user_id": signed.user.id, "place_id": place_id}).execute()
            client.table("reviews").insert({"user_id": signed.user.id, "place_id": place_id, "rating": rating}).execute()
        result.append(client)
    return {"places": chosen, "users": result}


def test_count_of_every_visible_row(agg_server):
    url, keys = agg_server
    anon = create_client(url, keys["anon_key"])
    rows = anon.table("places").select("id").limit(SUBSET * 2).execute().data
    assert anon.table("places").select("count()").execute().data == [{"count": len(rows)}]
    assert anon.table("places").select("n:count()::text").execute().data == [{"n": str(len(rows))}]


def test_grouped_counts_by_category_match_a_plain_read(agg_server):
    url, keys = agg_server
    anon = create_client(url, keys["anon_key"])
    plain = anon.table("places").select("category").limit(SUBSET * 2).execute().data
    expected: dict[str, int] = defaultdict(int)
    for row in plain:
        expected[row["category"]] += 1
    grouped = anon.table("places").select("category, count()").order("category").execute().data
    assert [r["category"] for r in grouped] == sorted(expected)
    assert {r["category"]: r["count"] for r in grouped} == expected
    # Filters apply before aggregating.
    some = sorted(expected)[0]
    assert anon.table("places").select("count()").eq("category", some).execute().data == [{"count": expected[some]}]


def test_sum_avg_min_max_with_aliases_match_a_plain_read(agg_server):
    url, keys = agg_server
    anon = create_client(url, keys["anon_key"])
    plain = anon.table("places").select("category, latitude, rating_count").limit(SUBSET * 2).execute().data
    by_category: dict[str, list[dict]] = defaultdict(list)
    for row in plain:
        by_category[row["category"]].append(row)
    rows = (anon.table("places")
            .select("category, lat_avg:latitude.avg(), latitude.min(), latitude.max(), lat_sum:latitude.sum(), ratings:rating_count.sum()")
            .order("category", desc=True).execute().data)
    assert [r["category"] for r in rows] == sorted(by_category, reverse=True)
    for row in rows:
        values = [m["latitude"] for m in by_category[row["category"]] if m["latitude"] is not None]
        assert row["ratings"] == sum(m["rating_count"] for m in by_category[row["category"]])
        assert isinstance(row["ratings"], int)
        if not values:
            assert row["lat_avg"] is None and row["min"] is None and row["max"] is None
            continue
        assert row["lat_avg"] == pytest.approx(sum(values) / len(values), abs=1e-9)
        assert row["lat_sum"] == pytest.approx(sum(values), abs=1e-6)
        assert row["min"] == pytest.approx(min(values)) and row["max"] == pytest.approx(max(values))


def test_sum_of_integers_and_cast_input(agg_server, people):
    url, keys = agg_server
    anon = create_client(url, keys["anon_key"])
    ratings = [r["rating"] for r in anon.table("reviews").select("rating").execute().data]
    rows = anon.table("reviews").select("total:rating.sum(), rating.avg(), rating.count(), as_real:rating::float8.sum()").execute().data
    assert rows == [{"total": sum(ratings), "avg": pytest.approx(sum(ratings) / len(ratings)), "count": len(ratings), "as_real": sum(ratings)}]
    assert isinstance(rows[0]["total"], int)


def test_a_policy_hides_rows_from_aggregates(agg_server, people):
    url, keys = agg_server
    service = create_client(url, keys["service_role_key"])
    anon = create_client(url, keys["anon_key"])
    hidden = people["places"][0]
    service.table("places").update({"is_active": False}).eq("id", hidden).execute()
    try:
        visible = anon.table("places").select("id, rating_count").limit(SUBSET * 2).execute().data
        assert hidden not in {r["id"] for r in visible}
        everything = service.table("places").select("count()").execute().data[0]["count"]
        assert anon.table("places").select("count()").execute().data == [{"count": len(visible)}]
        assert everything == len(visible) + 1
    finally:
        service.table("places").update({"is_active": True}).eq("id", hidden).execute()
    # Favorites are owner-only: each user's count is their own rows, the anonymous count zero.
    for client in people["users"]:
        own = client.table("favorites").select("id").execute().data
        assert client.table("favorites").select("count()").execute().data == [{"count": len(own)}]
        by_place = client.table("favorites").select("place_id, count()").execute().data
        assert sum(r["count"] for r in by_place) == len(own)
    assert anon.table("favorites").select("count()").execute().data == [{"count": 0}]
    assert service.table("favorites").select("count()").execute().data == [{"count": 5}]


def test_aggregates_inside_an_embed_are_per_parent(agg_server, people):
    url, keys = agg_server
    anon = create_client(url, keys["anon_key"])
    rows = anon.table("places").select("id, reviews(rating.avg(), n:count())").in_("id", people["places"]).order("id").execute().data
    for row in rows:
        ratings = [r["rating"] for r in anon.table("reviews").select("rating").eq("place_id", row["id"]).execute().data]
        assert len(row["reviews"]) == 1
        assert row["reviews"][0]["n"] == len(ratings)
        assert row["reviews"][0]["avg"] == pytest.approx(sum(ratings) / len(ratings))


def test_bad_aggregates_answer_with_postgrest_codes(agg_server):
    url, keys = agg_server
    anon = create_client(url, keys["anon_key"])
    for select, code in (("nope.sum()", "42703"), ("category.sum()", "42883")):
        with pytest.raises(APIError) as error:
            anon.table("places").select(select).execute()
        assert error.value.code == code, select
    with pytest.raises(APIError) as error:
        anon.table("places").select("category, count()").order("name_en").execute()
    assert error.value.code == "42803"

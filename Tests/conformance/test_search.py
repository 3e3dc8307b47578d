"""Search through the official Python client: `.text_search(...)` (the fts/plfts/phfts/wfts operators) and
`.rpc('search_places' / 'nearby_places', ...)`, against the real Riyadh places."""
from __future__ import annotations

import math

import pytest
from postgrest.exceptions import APIError

from conftest import place_row  # noqa: F401  (the fixtures come from conftest)


def _folded_words(text: str) -> list[str]:
    return [w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split()]


def test_text_search_operators(anon, places):
    plain = anon.table("places").select("id,name_en").text_search("name_en", "coffee hill", options={"type": "plain"}).execute().data
    assert {r["id"] for r in plain} >= {"coffee-hill-cafe"}
    assert all({"coffee", "hill"} <= set(_folded_words(r["name_en"])) for r in plain)

    phrase = anon.table("places").select("id").text_search("name_en", "hill coffee", options={"type": "phrase"}).execute().data
    assert "coffee-hill-cafe" not in {r["id"] for r in phrase}

    web = anon.table("places").select("id").text_search("name_en", '"coffee hill" or kudu', options={"type": "web_search", "config": "english"}).execute().data
    ids = {r["id"] for r in web}
    assert {"coffee-hill-cafe", "kudu"} <= ids

    # to_tsquery syntax, with English stemming through the index: hospitals → hospital.
    stemmed = anon.table("places").select("id").text_search("name_en", "hospitals & sanad", options={"config": "english"}).execute().data
    assert [r["id"] for r in stemmed] == ["aster-sanad-hospital"]

    # Arabic, folded: typed without hamza and with ه for ة.
    arabic = anon.table("places").select("id").text_search("name_ar", "صيدليه اطلس", options={"type": "plain"}).execute().data
    assert [r["id"] for r in arabic] == ["node-1819663039"]


def test_text_search_errors(anon):
    with pytest.raises(APIError) as bad:
        anon.table("places").select("id").text_search("name_en", "coffee &").execute()
    assert bad.value.code == "42601"
    with pytest.raises(APIError) as config:
        anon.table("places").select("id").text_search("name_en", "coffee", options={"config": "klingon"}).execute()
    assert config.value.code == "42704"


def test_search_places_rpc(anon):
    rows = anon.rpc("search_places", {"query": "starb"}).execute().data
    assert rows and rows[0]["name_en"] == "Starbucks"
    assert set(rows[0]) >= {"id", "name_ar", "name_en", "category", "google_rating", "latitude", "longitude", "relevance"}
    relevances = [r["relevance"] for r in rows]
    assert relevances == sorted(relevances, reverse=True)
    typo = anon.rpc("search_places", {"query": "Starbuks", "max_results": 5}).execute().data
    # The misspelt name comes back first; other names that pass the similarity threshold may follow (Postgres'
    # pg_trgm scans every candidate, SQLite's trigram prefilter fewer).
    assert typo and typo[0]["name_en"] == "Starbucks"
    assert [r["relevance"] for r in typo] == sorted((r["relevance"] for r in typo), reverse=True)
    for hostile in ['"', "coffee OR x", "NEAR(", "*", "-", "🤖", "", "x" * 10_000]:
        anon.rpc("search_places", {"query": hostile}).execute()
    cafes = anon.rpc("search_places", {"query": "coffee", "cat": "cafe"}).select("id,category").limit(5).execute().data
    assert cafes and all(r["category"] == "cafe" for r in cafes)


def _haversine(lat1, lng1, lat2, lng2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lng2 - lng1) / 2) ** 2
    return 2 * 6371008.8 * math.asin(math.sqrt(a))


def test_nearby_places_rpc(anon, places):
    lat, lng = 24.6877, 46.6857
    rows = anon.rpc("nearby_places", {"lat": lat, "lng": lng, "radius_m": 2000, "max_results": 30}).execute().data
    expected = sorted(
        (_haversine(lat, lng, p["latitude"], p["longitude"]), p["id"])
        for p in places if p.get("latitude") is not None and p.get("is_active", True)
    )
    expected = [e for e in expected if e[0] <= 2000][:30]
    assert len(rows) == len(expected)
    for row, (distance, _) in zip(rows, expected):
        assert abs(row["distance_meters"] - distance) < 0.05
    with pytest.raises(APIError) as bad:
        anon.rpc("nearby_places", {"lat": 124.0, "lng": lng}).execute()
    assert bad.value.code == "22023"

"""REST (/rest/v1) conformance with supabase-py 2.34.1, per wire-protocol.md §2 and §5.

Every expected value is derived from places.json (see conftest.place_row); nothing is hard-coded
from the server's own answers.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import re
import socket
import time
import uuid
from typing import Any, Callable

import httpx
import pytest
from postgrest.exceptions import APIError

Row = dict[str, Any]

ENTRECOTE = "Entrecôte Café de Paris"  # several rows, a space and non-ASCII letters
TULIP = "Tulip Inn, Olaya House"  # a comma: must be quoted inside in.(…) and or=(…)
ERROR_KEYS = {"code", "details", "hint", "message"}


# ---------------------------------------------------------------- helpers


def where(places: list[Row], pred: Callable[[Row], bool]) -> list[Row]:
    return [p for p in places if pred(p)]


def ids(rows) -> set[str]:
    return {r["id"] for r in rows}


def ascii_lower(s: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in s)


def like(pattern: str, value: str | None, *, fold: bool = False) -> bool:
    """PostgREST LIKE with `*` as `%` (no `_` or `%` in the patterns used here)."""
    if value is None:
        return False
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    if fold:
        return re.fullmatch(ascii_lower(regex), ascii_lower(value), re.DOTALL) is not None
    return re.fullmatch(regex, value, re.DOTALL) is not None


def one(places: list[Row], pred: Callable[[Row], bool]) -> Row:
    found = where(places, pred)
    assert len(found) == 1, f"test data assumption broken: {len(found)} rows match"
    return found[0]


def assert_error_shape(body: Any) -> None:
    assert isinstance(body, dict), body
    assert set(body) == ERROR_KEYS, f"error body keys {sorted(body)} != {sorted(ERROR_KEYS)}: {body}"
    assert isinstance(body["code"], str) and body["code"], body
    assert isinstance(body["message"], str) and body["message"], body
    assert body["details"] is None or isinstance(body["details"], str), body
    assert body["hint"] is None or isinstance(body["hint"], str), body


def total_of(content_range: str) -> str:
    return content_range.split("/", 1)[1]


# ---------------------------------------------------------------- select


def test_select_columns_returns_only_those_columns(anon, places):
    kudu = one(places, lambda p: p["id"] == "kudu")
    res = anon.table("places").select("id,name_en,category,tags").eq("id", "kudu").execute()
    assert res.data == [{k: kudu[k] for k in ("id", "name_en", "category", "tags")}]


def test_select_alias_and_cast(anon, places):
    kudu = one(places, lambda p: p["id"] == "kudu")
    res = anon.table("places").select("ident:id, lat:latitude::text").eq("id", "kudu").execute()
    assert res.data == [{"ident": "kudu", "lat": repr(kudu["latitude"])}]


def test_select_star_row_matches_source_and_types(anon, places):
    crowne = one(places, lambda p: p["id"] == "crowne-plaza-riyadh-palace")
    row = anon.table("places").select("*").eq("id", crowne["id"]).execute().data
    assert len(row) == 1
    row = row[0]
    for key in ("id", "name_ar", "name_en", "category", "category_ar", "latitude", "longitude",
                "google_maps_url", "address_ar", "phone", "website", "tags"):
        assert row[key] == crowne[key], key
    assert isinstance(row["tags"], list)
    assert row["is_active"] is True  # a JSON boolean, not 1
    assert row["is_trending"] is False
    assert row["neighborhood"] is None
    # Timestamps are UTC ISO-8601 with a `T` (wire-protocol §1).
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)", row["created_at"]), row["created_at"]


def test_json_content_type(http):
    r = http.get("/places?select=id&limit=1")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/json")


# ---------------------------------------------------------------- filters


def test_eq_filter(anon, places):
    expected = where(places, lambda p: p["category"] == "cafe")
    res = anon.table("places").select("id,category", count="exact").eq("category", "cafe").execute()
    assert res.count == len(expected)
    assert ids(res.data) == ids(expected)
    assert {r["category"] for r in res.data} == {"cafe"}


def test_neq_excludes_nulls(anon, places):
    expected = where(places, lambda p: p["name_en"] is not None and p["name_en"] != "Kudu")
    res = anon.table("places").select("id", count="exact", head=True).neq("name_en", "Kudu").execute()
    assert res.count == len(expected)
    # Sanity: the NULL names really are excluded, the filter is not a plain "everything but Kudu".
    assert res.count < len(where(places, lambda p: p["name_en"] != "Kudu"))


@pytest.mark.parametrize(
    "op, cmp",
    [
        ("gt", lambda a, b: a > b),
        ("gte", lambda a, b: a >= b),
        ("lt", lambda a, b: a < b),
        ("lte", lambda a, b: a <= b),
    ],
)
def test_numeric_comparisons(anon, places, op, cmp):
    # A threshold that is a real latitude, so gt/gte and lt/lte differ.
    lats = sorted(p["latitude"] for p in places)
    threshold = lats[len(lats) // 2]
    expected = where(places, lambda p: cmp(p["latitude"], threshold))
    query = anon.table("places").select("id", count="exact", head=True)
    res = getattr(query, op)("latitude", threshold).execute()
    assert res.count == len(expected)


def test_repeated_filters_are_anded(anon, places):
    expected = where(places, lambda p: 24.7 < p["latitude"] < 24.71)
    assert expected, "test data assumption broken"
    res = anon.table("places").select("id").gt("latitude", 24.7).lt("latitude", 24.71).execute()
    assert ids(res.data) == ids(expected)


def test_like_is_case_sensitive(anon, places):
    expected = where(places, lambda p: like("*Cafe*", p["name_en"]))
    folded = where(places, lambda p: like("*Cafe*", p["name_en"], fold=True))
    assert 0 < len(expected) < len(folded), "test data assumption broken"
    res = anon.table("places").select("id,name_en").like("name_en", "*Cafe*").execute()
    assert ids(res.data) == ids(expected)


def test_ilike_is_case_insensitive(anon, places):
    expected = where(places, lambda p: like("*CAF*", p["name_en"], fold=True))
    assert len(expected) >= 3
    res = anon.table("places").select("id,name_en").ilike("name_en", "*CAF*").execute()
    assert ids(res.data) == ids(expected)


def test_ilike_with_count_and_limit_raw(http, places):
    """Checklist §5.1: ilike + order nullslast + limit with count → 206, Content-Range 0-1/N."""
    n = len(where(places, lambda p: like("*caf*", p["name_en"], fold=True)))
    assert n > 2
    q = "/places?select=id,name_en&name_en=ilike.*caf*&order=name_en.desc.nullslast&limit=2"
    r = http.get(q, headers={"Prefer": "count=exact"})
    assert r.status_code == 206, r.text[:500]
    assert r.headers["content-range"] == f"0-1/{n}"
    assert len(r.json()) == 2
    r = http.get(q)
    assert r.status_code == 200, r.text[:500]
    assert r.headers["content-range"] == "0-1/*"


def test_in_filter_with_quoted_values(anon, places):
    wanted = ["Kudu", TULIP, ENTRECOTE]
    expected = where(places, lambda p: p["name_en"] in wanted)
    res = anon.table("places").select("id,name_en").in_("name_en", wanted).execute()
    assert ids(res.data) == ids(expected)
    assert {r["name_en"] for r in res.data} == set(wanted)


def test_not_in_filter(anon, places):
    excluded = ["cafe", "restaurant", "fast_food"]
    expected = where(places, lambda p: p["category"] not in excluded)
    res = anon.table("places").select("id", count="exact", head=True).not_.in_("category", excluded).execute()
    assert res.count == len(expected)


def test_not_in_raw_with_quoted_comma(http, places):
    """`not.in.("a,b",c)`: a quoted element keeps its comma."""
    expected = where(places, lambda p: p["name_en"] is not None and p["name_en"] not in (TULIP, "Kudu"))
    r = http.get('/places?select=id&name_en=not.in.("Tulip Inn, Olaya House",Kudu)&limit=1', headers={"Prefer": "count=exact"})
    assert r.status_code == 206, r.text[:500]
    assert total_of(r.headers["content-range"]) == str(len(expected))


def test_is_null_and_not_null(anon, places):
    no_phone = where(places, lambda p: p["phone"] is None)
    named = where(places, lambda p: p["name_en"] is not None)
    res = anon.table("places").select("id", count="exact", head=True).is_("phone", None).execute()
    assert res.count == len(no_phone)
    res = anon.table("places").select("id", count="exact", head=True).not_.is_("name_en", "null").execute()
    assert res.count == len(named)


def test_is_true_false(anon, places):
    trending = where(places, lambda p: p["is_trending"])
    res = anon.table("places").select("id", count="exact", head=True).is_("is_active", True).execute()
    assert res.count == len(places)  # every imported place is active
    res = anon.table("places").select("id", count="exact", head=True).is_("is_trending", False).execute()
    assert res.count == len(places) - len(trending)


def test_eq_null_is_the_text_null_not_sql_null(anon, places):
    """`eq.null` compares with the string "null"; only `is.null` tests NULL (§2.3)."""
    expected = where(places, lambda p: p["name_en"] == "null")
    res = anon.table("places").select("id", count="exact").eq("name_en", "null").execute()
    assert res.count == len(expected)
    assert ids(res.data) == ids(expected)


def test_or_tree_nested(anon, places):
    expected = where(
        places,
        lambda p: p["name_en"] == "Kudu" or (p["category"] == "cafe" and p["latitude"] > 24.8),
    )
    res = (
        anon.table("places")
        .select("id", count="exact")
        .or_("name_en.eq.Kudu,and(category.eq.cafe,latitude.gt.24.8)")
        .execute()
    )
    assert res.count == len(expected)
    assert ids(res.data) == ids(expected)


def test_not_or(anon, places):
    expected = where(places, lambda p: p["category"] not in ("cafe", "restaurant"))
    res = (
        anon.table("places")
        .select("id", count="exact", head=True)
        .not_.or_("category.eq.cafe,category.eq.restaurant")
        .execute()
    )
    assert res.count == len(expected)


def test_or_with_quoted_value_and_not_is(anon, places):
    pair = ("kudu", "crowne-plaza-riyadh-palace")  # one without a phone, one with
    assert [one(places, lambda p, i=i: p["id"] == i)["phone"] is None for i in pair] == [True, False]
    expected = where(places, lambda p: p["name_en"] == TULIP or (p["id"] in pair and p["phone"] is not None))
    res = (
        anon.table("places")
        .select("id")
        .or_(f'name_en.eq."{TULIP}",and(id.in.({",".join(pair)}),not.phone.is.null)')
        .execute()
    )
    assert ids(res.data) == ids(expected)
    assert "crowne-plaza-riyadh-palace" in ids(res.data) and "kudu" not in ids(res.data)


def test_contains_tags(anon, places):
    expected = where(places, lambda p: "cafe" in p["tags"])
    res = anon.table("places").select("id", count="exact").contains("tags", ["cafe"]).execute()
    assert res.count == len(expected)
    assert ids(res.data) == ids(expected)


def test_contains_tags_several(anon, places):
    wanted = {"fuel", "ALDREES"}
    expected = where(places, lambda p: wanted <= set(p["tags"]))
    assert 0 < len(expected) < len(where(places, lambda p: "fuel" in p["tags"]))
    res = anon.table("places").select("id").contains("tags", sorted(wanted)).execute()
    assert ids(res.data) == ids(expected)


def test_overlaps_and_contained_by_tags(anon, places):
    ov = {"bakery", "dessert"}
    expected = where(places, lambda p: bool(ov & set(p["tags"])))
    res = anon.table("places").select("id").overlaps("tags", sorted(ov)).execute()
    assert ids(res.data) == ids(expected)
    cd = {"cafe", "restaurant"}
    expected = where(places, lambda p: set(p["tags"]) <= cd)
    res = anon.table("places").select("id").contained_by("tags", sorted(cd)).execute()
    assert ids(res.data) == ids(expected)


def test_match_and_imatch(anon, places):
    expected = where(places, lambda p: p["name_en"] is not None and re.search(r"^Kud", p["name_en"]) is not None)
    folded = where(places, lambda p: p["name_en"] is not None and re.search(r"^kud", p["name_en"], re.I) is not None)
    assert expected
    res = anon.table("places").select("id").filter("name_en", "match", "^Kud").execute()
    assert ids(res.data) == ids(expected)
    res = anon.table("places").select("id").filter("name_en", "imatch", "^kud").execute()
    assert ids(res.data) == ids(folded)
    res = anon.table("places").select("id").filter("name_en", "match", "^kud").execute()
    assert ids(res.data) == ids(where(places, lambda p: (p["name_en"] or "").startswith("kud")))


def test_isdistinct_keeps_nulls(anon, places):
    expected = where(places, lambda p: p["name_en"] != "Kudu")  # NULL is distinct from 'Kudu'
    res = anon.table("places").select("id", count="exact", head=True).filter("name_en", "isdistinct", "Kudu").execute()
    assert res.count == len(expected)


def test_like_any_and_ilike_all(anon, places):
    expected = where(places, lambda p: like("*Kudu*", p["name_en"]) or like("*Starbucks*", p["name_en"]))
    res = anon.table("places").select("id").like_any_of("name_en", "*Kudu*,*Starbucks*").execute()
    assert ids(res.data) == ids(expected)
    expected = where(places, lambda p: like("*caf*", p["name_en"], fold=True) and like("*PARIS", p["name_en"], fold=True))
    assert expected
    res = anon.table("places").select("id").ilike_all_of("name_en", "*caf*,*PARIS").execute()
    assert ids(res.data) == ids(expected)


def test_not_like_all(http, places):
    expected = where(
        places,
        lambda p: p["name_en"] is not None and not (like("*Caf*", p["name_en"]) and like("*Paris", p["name_en"])),
    )
    r = http.get("/places?select=id&name_en=not.like(all).{*Caf*,*Paris}&limit=1", headers={"Prefer": "count=exact"})
    assert r.status_code == 206, r.text[:500]
    assert total_of(r.headers["content-range"]) == str(len(expected))


def test_contains_json_array_form(http, places):
    expected = where(places, lambda p: "cafe" in p["tags"])
    r = http.get('/places?select=id&tags=cs.["cafe"]&limit=1', headers={"Prefer": "count=exact"})
    assert r.status_code == 206, r.text[:500]
    assert total_of(r.headers["content-range"]) == str(len(expected))


def test_repeated_limit_last_wins(http):
    r = http.get("/places?select=id&limit=5&limit=2")
    assert r.status_code == 200, r.text[:500]
    assert len(r.json()) == 2


def test_quoted_column_name_in_select(anon, places):
    kudu = one(places, lambda p: p["id"] == "kudu")
    res = anon.table("places").select('id,"name_en"').eq("id", "kudu").execute()
    assert res.data == [{"id": "kudu", "name_en": kudu["name_en"]}]


def test_in_and_or_with_parentheses_in_quoted_values(http, places):
    names = ["Shiraz Restaurant (Iranian)", "National Hospital (1,398 patient )"]
    expected = where(places, lambda p: p["name_en"] in names)
    assert len(expected) >= 2
    r = http.get('/places?select=id&name_en=in.("Shiraz Restaurant (Iranian)","National Hospital (1,398 patient )")')
    assert r.status_code == 200, r.text[:500]
    assert ids(r.json()) == ids(expected)
    expected = where(places, lambda p: p["id"] in ("kudu", "arabica") or p["name_en"] == names[0])
    r = http.get('/places?select=id&or=(id.in.(kudu,arabica),name_en.eq."Shiraz Restaurant (Iranian)")')
    assert r.status_code == 200, r.text[:500]
    assert ids(r.json()) == ids(expected)


def test_client_in_with_parentheses(anon, places):
    names = ["Shiraz Restaurant (Iranian)", "Kudu"]
    res = anon.table("places").select("id").in_("name_en", names).execute()
    assert ids(res.data) == ids(where(places, lambda p: p["name_en"] in names))


# ---------------------------------------------------------------- order and paging


def by_lat_desc(places: list[Row]) -> list[Row]:
    return sorted(places, key=lambda p: (-p["latitude"], p["id"]))


def test_order_and_range(anon, places):
    expected = by_lat_desc(places)[10:20]
    res = (
        anon.table("places")
        .select("id,latitude", count="exact")
        .order("latitude", desc=True)
        .order("id")
        .range(10, 19)
        .execute()
    )
    assert [r["id"] for r in res.data] == [p["id"] for p in expected]
    assert res.count == len(places)


def test_range_status_and_content_range_raw(http, places):
    r = http.get("/places?select=id&order=latitude.desc,id.asc&offset=10&limit=10", headers={"Prefer": "count=exact"})
    assert r.status_code == 206
    assert r.headers["content-range"] == f"10-19/{len(places)}"
    assert [x["id"] for x in r.json()] == [p["id"] for p in by_lat_desc(places)[10:20]]


def test_limit_without_count(http):
    r = http.get("/places?select=id&limit=5")
    assert r.status_code == 200
    assert len(r.json()) == 5
    assert r.headers["content-range"] == "0-4/*"


def _name_order(rows: list[Row], *, desc: bool, nulls_first: bool) -> list[str | None]:
    names = sorted((r["name_en"] for r in rows if r["name_en"] is not None), reverse=desc)
    nulls = [None] * sum(1 for r in rows if r["name_en"] is None)
    return nulls + names if nulls_first else names + nulls


@pytest.mark.parametrize(
    "desc, nullsfirst",
    [(False, False), (False, True), (True, False), (True, True)],
)
def test_order_nulls_explicit(anon, places, desc, nullsfirst):
    cafes = where(places, lambda p: p["category"] == "cafe")
    assert any(p["name_en"] is None for p in cafes)
    res = (
        anon.table("places")
        .select("name_en")
        .eq("category", "cafe")
        .order("name_en", desc=desc, nullsfirst=nullsfirst)
        .execute()
    )
    assert [r["name_en"] for r in res.data] == _name_order(cafes, desc=desc, nulls_first=nullsfirst)


@pytest.mark.parametrize("direction, nulls_first", [("asc", False), ("desc", True)])
def test_order_default_nulls(http, places, direction, nulls_first):
    """Without a nulls part: nulls last for asc, first for desc (as in PostgreSQL)."""
    cafes = where(places, lambda p: p["category"] == "cafe")
    r = http.get(f"/places?select=name_en&category=eq.cafe&order=name_en.{direction}")
    assert r.status_code == 200, r.text[:500]
    assert [x["name_en"] for x in r.json()] == _name_order(cafes, desc=direction == "desc", nulls_first=nulls_first)


def test_count_exact_whole_table(anon, places):
    res = anon.table("places").select("*", count="exact").limit(1).execute()
    assert res.count == len(places)
    assert len(res.data) == 1


def test_count_with_no_rows(http):
    r = http.get("/places?select=id&id=eq.no-such-place", headers={"Prefer": "count=exact"})
    assert r.status_code == 200
    assert r.json() == []
    assert r.headers["content-range"] == "*/0"


def test_offset_equal_to_total_is_empty_206(http, places):
    n = len(places)
    r = http.get(f"/places?select=id&offset={n}&limit=5", headers={"Prefer": "count=exact"})
    assert r.status_code == 206, r.text[:500]
    assert r.json() == []
    assert r.headers["content-range"] == f"*/{n}"


def test_offset_beyond_total_without_count_is_empty_200(http, places):
    r = http.get(f"/places?select=id&offset={len(places) + 100}")
    assert r.status_code == 200, r.text[:500]
    assert r.json() == []
    assert r.headers["content-range"] == "*/*"


def test_offset_beyond_total_is_416(http, anon, places):
    n = len(places)
    r = http.get(f"/places?select=id&offset={n + 100}&limit=5", headers={"Prefer": "count=exact"})
    assert r.status_code == 416, r.text[:500]
    body = r.json()
    assert_error_shape(body)
    assert body["code"] == "PGRST103"
    assert body["details"] == f"An offset of {n + 100} was requested, but there are only {n} rows."
    with pytest.raises(APIError) as exc:
        anon.table("places").select("id", count="exact").range(n + 100, n + 109).execute()
    assert exc.value.code == "PGRST103"


def test_offset_beyond_small_filtered_total_is_416(http, places):
    """Checklist §5.5: offset=100 with count on a handful of rows → 416."""
    few = where(places, lambda p: p["name_en"] == ENTRECOTE)
    assert 1 < len(few) < 100
    r = http.get(f"/places?select=id&name_en=eq.{ENTRECOTE}&offset=100", headers={"Prefer": "count=exact"})
    assert r.status_code == 416, r.text[:500]
    assert r.json()["details"] == f"An offset of 100 was requested, but there are only {len(few)} rows."


def test_negative_limit_is_416(http):
    r = http.get("/places?select=id&limit=-1")
    assert r.status_code == 416, r.text[:500]
    assert_error_shape(r.json())
    assert r.json()["code"] == "PGRST103"


def test_offset_and_limit_content_range(http, places):
    ordered = sorted(p["id"] for p in places)
    r = http.get("/places?select=id&order=id&offset=5&limit=2", headers={"Prefer": "count=exact"})
    assert r.status_code == 206, r.text[:500]
    assert r.headers["content-range"] == f"5-6/{len(places)}"
    assert [x["id"] for x in r.json()] == ordered[5:7]


def test_limit_zero_with_count(http, places):
    r = http.get("/places?select=id&limit=0", headers={"Prefer": "count=exact"})
    assert r.status_code == 206, r.text[:500]
    assert r.json() == []
    assert r.headers["content-range"] == f"*/{len(places)}"


@pytest.mark.parametrize("method", ["planned", "estimated"])
def test_planned_and_estimated_counts_are_exact(anon, places, method):
    expected = where(places, lambda p: p["category"] == "cafe")
    res = anon.table("places").select("id", count=method).eq("category", "cafe").limit(1).execute()
    assert res.count == len(expected)


def test_prefer_with_several_values(http, places):
    r = http.get("/places?select=id&limit=1", headers={"Prefer": "return=representation, count=exact"})
    assert r.status_code == 206, r.text[:500]
    assert total_of(r.headers["content-range"]) == str(len(places))


# ---------------------------------------------------------------- singular responses


def test_single_one_row_is_object(anon, places):
    kudu = one(places, lambda p: p["id"] == "kudu")
    res = anon.table("places").select("id,name_en").eq("id", "kudu").single().execute()
    assert res.data == {"id": "kudu", "name_en": kudu["name_en"]}


def test_single_zero_rows_is_pgrst116(anon, http):
    with pytest.raises(APIError) as exc:
        anon.table("places").select("id").eq("id", "no-such-place").single().execute()
    assert exc.value.code == "PGRST116"
    assert exc.value.details == "The result contains 0 rows"
    assert exc.value.message == "Cannot coerce the result to a single JSON object"
    r = http.get("/places?select=id&id=eq.no-such-place", headers={"Accept": "application/vnd.pgrst.object+json"})
    assert r.status_code == 406
    assert_error_shape(r.json())


def test_single_many_rows_reports_the_count(anon, places):
    n = len(where(places, lambda p: p["name_en"] == ENTRECOTE))
    assert n >= 2
    with pytest.raises(APIError) as exc:
        anon.table("places").select("id").eq("name_en", ENTRECOTE).single().execute()
    assert exc.value.code == "PGRST116"
    assert exc.value.details == f"The result contains {n} rows"


def test_maybe_single(anon, places):
    assert anon.table("places").select("id").eq("id", "no-such-place").maybe_single().execute() is None
    res = anon.table("places").select("id,category").eq("id", "kudu").maybe_single().execute()
    assert res is not None
    assert res.data == {"id": "kudu", "category": one(places, lambda p: p["id"] == "kudu")["category"]}


# ---------------------------------------------------------------- media types


CSV_IDS = ["arabica", "crowne-plaza-riyadh-palace", "tulip-inn-olaya-house"]
CSV_COLUMNS = ["id", "name_en", "phone", "google_maps_url", "latitude"]


def _expected_csv_rows(places):
    out = []
    for pid in sorted(CSV_IDS):
        p = one(places, lambda x, pid=pid: x["id"] == pid)
        out.append(["" if p[c] is None else (repr(p[c]) if isinstance(p[c], float) else p[c]) for c in CSV_COLUMNS])
    return out


def test_csv_raw(http, places):
    r = http.get(
        f"/places?select={','.join(CSV_COLUMNS)}&id=in.({','.join(CSV_IDS)})&order=id",
        headers={"Accept": "text/csv"},
    )
    assert r.status_code == 200, r.text[:500]
    assert r.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[0] == CSV_COLUMNS
    assert rows[1:] == _expected_csv_rows(places)


def test_csv_client(anon, places):
    res = anon.table("places").select(",".join(CSV_COLUMNS)).in_("id", CSV_IDS).order("id").csv().execute()
    rows = list(csv.reader(io.StringIO(res.data)))
    assert rows == [CSV_COLUMNS, *_expected_csv_rows(places)]


def test_unsupported_accept_is_406(http):
    r = http.get("/places?select=id&limit=1", headers={"Accept": "application/x-nonsense"})
    assert r.status_code == 406, r.text[:500]
    assert_error_shape(r.json())
    assert r.json()["code"] == "PGRST107"


# ---------------------------------------------------------------- query-string decoding


def test_client_eq_with_space_and_non_ascii(anon, places):
    expected = where(places, lambda p: p["name_en"] == ENTRECOTE)
    res = anon.table("places").select("id").eq("name_en", ENTRECOTE).execute()
    assert ids(res.data) == ids(expected)


@pytest.mark.parametrize(
    "encoded",
    [
        "Entrec%C3%B4te+Caf%C3%A9+de+Paris",  # `+` as space, uppercase hex
        "Entrec%c3%b4te%20Caf%c3%a9%20de%20Paris",  # %20, lowercase hex
        "Entrec%C3%B4te+Caf%C3%A9%20de+Paris",  # mixed
    ],
)
def test_percent_and_plus_decoding(http, places, encoded):
    expected = where(places, lambda p: p["name_en"] == ENTRECOTE)
    r = http.get(f"/places?select=id,name_en&name_en=eq.{encoded}")
    assert r.status_code == 200, r.text[:500]
    assert ids(r.json()) == ids(expected)
    assert {x["name_en"] for x in r.json()} == {ENTRECOTE}


def test_encoded_reserved_characters(http, places):
    arabica = one(places, lambda p: p["name_en"] == "% Arabica")
    r = http.get("/places?select=id&name_en=eq.%25+Arabica")
    assert ids(r.json()) == {arabica["id"]}
    fish = where(places, lambda p: p["name_en"] == "Fish & Chips")
    r = http.get("/places?select=id&name_en=eq.Fish+%26+Chips")
    assert ids(r.json()) == ids(fish) != set()


def test_encoded_plus_in_value(http, anon, places):
    phone = "+966114606600"
    expected = where(places, lambda p: p["phone"] == phone)
    assert expected
    r = http.get("/places?select=id&phone=eq.%2B966114606600")
    assert ids(r.json()) == ids(expected)
    # An unencoded `+` is a space, so this is " 966114606600" and matches nothing.
    r = http.get("/places?select=id&phone=eq.+966114606600")
    assert r.status_code == 200
    assert r.json() == []
    # The client sends `+` as %2B and the space as `+`.
    spaced = "+966 114-054-444"
    res = anon.table("places").select("id").eq("phone", spaced).execute()
    assert ids(res.data) == ids(where(places, lambda p: p["phone"] == spaced)) != set()


def test_percent_encoded_key_and_arabic_value(http, places):
    r = http.get("/places?select=id&name%5Fen=eq.Kudu")
    assert r.status_code == 200, r.text[:500]
    assert ids(r.json()) == ids(where(places, lambda p: p["name_en"] == "Kudu"))
    restaurants_ar = one(places, lambda p: p["id"] == "kudu")["category_ar"]
    expected = where(places, lambda p: p["category_ar"] == restaurants_ar)
    encoded = "".join(f"%{b:02X}" for b in restaurants_ar.encode())
    r = http.get(f"/places?select=id&category_ar=eq.{encoded}&limit=1", headers={"Prefer": "count=exact"})
    assert r.status_code in (200, 206), r.text[:500]
    assert total_of(r.headers["content-range"]) == str(len(expected))


def test_boolean_values_case_insensitive(http, places):
    r = http.get("/places?select=id&is_active=eq.TRUE&limit=1", headers={"Prefer": "count=exact"})
    assert r.status_code == 206, r.text[:500]
    assert total_of(r.headers["content-range"]) == str(len(places))


def test_exponent_number_value(anon, places):
    # The client sends the `+` as %2B. (1e+20 itself would overflow latitude's numeric(10,7), as in PostgreSQL.)
    expected = where(places, lambda p: p["latitude"] < 24.7)
    res = anon.table("places").select("id", count="exact", head=True).lt("latitude", "2.47e+1").execute()
    assert res.count == len(expected)


# ---------------------------------------------------------------- errors


def test_unknown_select_column_is_42703(anon, http):
    with pytest.raises(APIError) as exc:
        anon.table("places").select("nope").execute()
    assert exc.value.code == "42703"
    r = http.get("/places?select=nope")
    assert r.status_code == 400
    assert_error_shape(r.json())
    assert r.json()["message"] == "column places.nope does not exist"


@pytest.mark.parametrize("query", ["select=id&nope=eq.1", "select=id&order=nope.asc"])
def test_unknown_filter_or_order_column_is_42703(http, query):
    r = http.get(f"/places?{query}")
    assert r.status_code == 400, r.text[:500]
    assert_error_shape(r.json())
    assert r.json()["code"] == "42703"


# `users` is no longer reserved: Caravan's own table is auth_users (system-0006), and GroupDecisions serves an app `users`.
@pytest.mark.parametrize("table", ["no_such_table", "auth_users", "caravan_secrets", "caravan_changes"])
def test_unknown_or_unexposed_table_is_404(anon, http, table):
    with pytest.raises(APIError) as exc:
        anon.table(table).select("*").execute()
    assert exc.value.code == "PGRST205"
    r = http.get(f"/{table}")
    assert r.status_code == 404
    assert_error_shape(r.json())


@pytest.mark.parametrize(
    "query",
    [
        "name_en=foo.bar",  # no operator
        "name_en=eq",  # operator without a value part
        "latitude=between.1.2",  # unknown operator
        "or=(name_en.eq.Kudu",  # unbalanced tree
        "or=name_en.eq.Kudu",  # tree without parentheses
        "order=latitude.sideways",  # bad order term
    ],
)
def test_bad_syntax_is_pgrst100(http, query):
    r = http.get(f"/places?select=id&{query}")
    assert r.status_code == 400, f"{query}: {r.status_code} {r.text[:500]}"
    assert_error_shape(r.json())
    assert r.json()["code"] == "PGRST100", r.text[:500]


def test_bad_filter_via_client(anon):
    with pytest.raises(APIError) as exc:
        anon.table("places").select("id").filter("name_en", "foo", "bar").execute()
    assert exc.value.code == "PGRST100"


def test_bad_value_for_type_is_22p02(http):
    r = http.get("/places?select=id&latitude=eq.abc")
    assert r.status_code == 400, r.text[:500]
    assert_error_shape(r.json())
    assert r.json()["code"] == "22P02"


def test_unexposed_schema_is_406_pgrst106(http):
    r = http.get("/places?select=id&limit=1", headers={"Accept-Profile": "other"})
    assert r.status_code == 406, r.text[:500]
    assert_error_shape(r.json())
    assert r.json()["code"] == "PGRST106"
    assert r.json()["message"] == "Invalid schema: other"
    r = http.get("/places?select=id&limit=1", headers={"Accept-Profile": "public"})
    assert r.status_code == 200


def test_embedding_without_a_relationship_is_400_pgrst200(http):
    r = http.get("/places?select=*,categories(*)&limit=1")
    assert r.status_code == 400, r.text[:500]
    assert_error_shape(r.json())
    assert r.json()["code"] == "PGRST200"


def test_order_by_a_json_path_orders_by_the_value_at_the_path(service, http):
    """`order=features->>seats.desc` orders by the text at the path, as PostgreSQL's `->>` does (so "90" > "7" > "40"
    on both engines), not by the whole `features` document."""
    tag = uuid.uuid4().hex[:6]
    rows = [{"id": f"seats-{tag}-{i}", "name_ar": "x", "category": f"seats-{tag}", "category_ar": "c",
             "features": {"a": 100 - i, "seats": seats}} for i, seats in enumerate([40, 90, 7])]
    service.table("places").insert(rows).execute()
    try:
        r = http.get(f"/places?select=id,seats:features->>seats&category=eq.seats-{tag}&order=features->>seats.desc")
        assert r.status_code == 200, r.text[:500]
        assert [row["seats"] for row in r.json()] == ["90", "7", "40"]
    finally:  # the session's server is shared: other tests count the places
        service.table("places").delete().eq("category", f"seats-{tag}").execute()


def test_misspelt_names_get_postgrests_suggestions(http):
    """PGRST200 says what it searched and which related table was probably meant; PGRST205 names the closest table —
    PostgREST 12's wording (its fuzzy match, `Perhaps you meant …`)."""
    r = http.get("/places?select=id,review(*)&limit=1")
    assert r.status_code == 400, r.text[:500]
    assert r.json() == {
        "code": "PGRST200",
        "message": "Could not find a relationship between 'places' and 'review' in the schema cache",
        "details": "Searched for a foreign key relationship between 'places' and 'review' in the schema 'public', but no matches were found.",
        "hint": "Perhaps you meant 'reviews' instead of 'review'.",
    }
    r = http.get("/places?select=id,zzzzzz(*)&limit=1")
    assert r.json()["hint"] is None and r.json()["details"].startswith("Searched for a foreign key relationship between 'places' and 'zzzzzz'")
    r = http.get("/place?select=id")
    assert r.status_code == 404
    assert r.json() == {"code": "PGRST205", "message": "Could not find the table 'public.place' in the schema cache", "details": None,
                        "hint": "Perhaps you meant the table 'public.places'"}


def test_missing_apikey_is_401(bare_http):
    r = bare_http.get("/places?select=id&limit=1")
    assert r.status_code == 401, r.text[:500]
    assert_error_shape(r.json())


def test_bad_jwt_is_401_pgrst301(bare_http):
    r = bare_http.get("/places?select=id&limit=1", headers={"apikey": "not-a-jwt", "Authorization": "Bearer not-a-jwt"})
    assert r.status_code == 401, r.text[:500]
    assert_error_shape(r.json())
    assert r.json()["code"] == "PGRST301"


@pytest.mark.parametrize(
    "path, headers",
    [
        ("/places?select=nope", {}),
        ("/no_such_table", {}),
        ("/places?name_en=foo.bar", {}),
        ("/places?offset=999999", {"Prefer": "count=exact"}),
        ("/places?id=eq.no-such-place", {"Accept": "application/vnd.pgrst.object+json"}),
        ("/places?limit=-1", {}),
        ("/places?order=nope", {}),
    ],
)
def test_every_error_body_has_the_four_keys(http, path, headers):
    r = http.get(path, headers=headers)
    assert r.status_code >= 400, r.text[:500]
    assert r.headers["content-type"].startswith("application/json")
    assert_error_shape(r.json())


# ---------------------------------------------------------------- HEAD


def test_head_returns_headers_without_body(http, places):
    n = len(places)
    cafes = len(where(places, lambda p: p["category"] == "cafe"))
    q = "/places?select=id&category=eq.cafe&limit=3"
    get = http.get(q, headers={"Prefer": "count=exact"})
    head = http.head(q, headers={"Prefer": "count=exact"})
    assert head.status_code == get.status_code == 206
    assert head.content == b""
    assert head.headers["content-range"] == get.headers["content-range"] == f"0-2/{cafes}"
    assert head.headers["content-type"] == get.headers["content-type"]
    assert n > cafes


def test_head_sends_no_body_bytes(server):
    """httpx never reads a HEAD body, so check the wire: a HEAD then a GET pipelined on one connection."""
    host, port = "127.0.0.1", int(server.url.rsplit(":", 1)[1])
    common = f"Host: {host}:{port}\r\napikey: {server.anon_key}\r\n"
    request = (
        f"HEAD /rest/v1/places?select=id&limit=3 HTTP/1.1\r\n{common}\r\n"
        f"GET /health HTTP/1.1\r\n{common}Connection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    raw = b"".join(chunks)
    head_headers, _, rest = raw.partition(b"\r\n\r\n")
    assert head_headers.startswith(b"HTTP/1.1 200"), head_headers[:200]
    assert b"content-range: 0-2/*" in head_headers.lower()
    # The very next bytes must be the second response, not a body.
    assert rest.startswith(b"HTTP/1.1 200"), rest[:200]
    assert rest.endswith(b'{"status":"ok"}'), rest[-200:]


def test_head_via_client_gives_count(anon, places):
    expected = where(places, lambda p: p["category"] == "cafe")
    res = anon.table("places").select("*", count="exact", head=True).eq("category", "cafe").execute()
    assert res.count == len(expected)
    assert not res.data


# ---------------------------------------------------------------- roles


def test_menu_prices_anon_sees_nothing(anon, http):
    res = anon.table("menu_prices").select("*", count="exact").execute()
    assert res.data == []
    assert res.count == 0
    r = http.get("/menu_prices")
    assert r.status_code == 200
    assert r.json() == []


def test_menu_prices_service_role(service, server):
    res = service.table("menu_prices").select("*", count="exact").execute()
    assert res.data == []
    assert res.count == 0
    r = httpx.get(
        f"{server.rest_url}/menu_prices",
        headers={"apikey": server.service_role_key, "Authorization": f"Bearer {server.service_role_key}"},
    )
    assert r.status_code == 200, r.text[:500]
    assert r.json() == []


def test_service_role_reads_places(service, places):
    res = service.table("places").select("id", count="exact", head=True).execute()
    assert res.count == len(places)


def test_apikey_header_name_case_insensitive(server, places):
    r = httpx.get(
        f"{server.rest_url}/places?select=id&limit=1",
        headers={"APIKEY": server.anon_key, "Prefer": "count=exact"},
    )
    assert r.status_code == 206, r.text[:500]
    assert total_of(r.headers["content-range"]) == str(len(places))


# ---------------------------------------------------------------- JWT roles


@pytest.fixture(scope="session")
def jwt_secret(server):
    """The deployment's HS256 secret (jwt_secret.json, or the database's caravan_secrets row), found by verifying the
    anon key against its candidate encodings."""
    jwt = pytest.importorskip("jwt")
    raw = server.deployment.signing_secret()
    candidates = [raw.encode()]
    try:
        candidates.append(base64.b64decode(raw, validate=True))
    except ValueError:
        pass
    for secret in candidates:
        try:
            jwt.decode(server.anon_key, secret, algorithms=["HS256"])
            return secret
        except jwt.InvalidTokenError:
            continue
    pytest.skip("no candidate secret in jwt_secret.json verifies the anon key")


def _mint(secret: bytes, **claims) -> str:
    import jwt

    now = int(time.time())
    payload = {"iat": now - 60, "exp": now + 3600, "iss": "caravan", **claims}
    return jwt.encode(payload, secret, algorithm="HS256", headers={"kid": "caravan"})


def test_expired_jwt_is_401_pgrst303(server, jwt_secret):
    token = _mint(jwt_secret, role="anon", exp=int(time.time()) - 60)
    r = httpx.get(
        f"{server.rest_url}/places?select=id&limit=1",
        headers={"apikey": server.anon_key, "Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 401, r.text[:500]
    assert_error_shape(r.json())
    assert r.json()["code"] == "PGRST303"
    assert r.json()["message"] == "JWT expired"
    assert r.headers["www-authenticate"].startswith('Bearer error="invalid_token"')


def test_unknown_role_is_401(server, jwt_secret):
    token = _mint(jwt_secret, role="nobody_at_all")
    r = httpx.get(
        f"{server.rest_url}/places?select=id&limit=1",
        headers={"apikey": server.anon_key, "Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 401, r.text[:500]
    assert_error_shape(r.json())


def test_role_comes_from_the_bearer_token(server, jwt_secret):
    """A valid minted token's role is used; a token signed with another secret is rejected (PGRST301)."""
    good = _mint(jwt_secret, role="service_role")
    r = httpx.get(
        f"{server.rest_url}/menu_prices?select=*",
        headers={"apikey": server.anon_key, "Authorization": f"Bearer {good}"},
    )
    assert r.status_code == 200, r.text[:500]
    assert r.json() == []
    forged = _mint(b"not-the-secret-" + jwt_secret, role="service_role")
    r = httpx.get(
        f"{server.rest_url}/menu_prices?select=*",
        headers={"apikey": server.anon_key, "Authorization": f"Bearer {forged}"},
    )
    assert r.status_code == 401, r.text[:500]
    assert r.json()["code"] == "PGRST301"

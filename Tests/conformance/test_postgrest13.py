"""PostgREST 13 behaviour through the official client: `max_affected()` (Prefer: handling=strict, max-affected=n) and
`strip_nulls()` (the `nulls=stripped` media types)."""

from __future__ import annotations

import uuid

import pytest
from postgrest.exceptions import APIError


@pytest.fixture
def fresh_places(service):
    """Makes places of its own in the shared deployment, and removes them afterwards: other files count the places."""
    made: list[str] = []

    def make(count: int) -> list[str]:
        tag = uuid.uuid4().hex[:8]
        rows = [{"id": f"ma-{tag}-{i}", "name_ar": "مكان", "category": "c", "category_ar": "c"} for i in range(count)]
        service.table("places").insert(rows).execute()
        made.extend(row["id"] for row in rows)
        return [row["id"] for row in rows]

    yield make
    if made:
        service.table("places").delete().in_("id", made).execute()


def test_max_affected_refuses_an_update_past_it_and_rolls_it_back(service, fresh_places):
    ids = fresh_places(3)
    with pytest.raises(APIError) as refused:
        service.table("places").update({"name_en": "Renamed"}).in_("id", ids).max_affected(2).execute()
    assert refused.value.code == "PGRST124"
    assert refused.value.message == "Query result exceeds max-affected preference constraint"
    assert refused.value.details == "The query affects 3 rows"
    rows = service.table("places").select("id,name_en").in_("id", ids).execute().data
    assert [row["name_en"] for row in rows] == [None, None, None]

    service.table("places").update({"name_en": "Renamed"}).in_("id", ids).max_affected(3).execute()
    rows = service.table("places").select("id,name_en").in_("id", ids).execute().data
    assert [row["name_en"] for row in rows] == ["Renamed"] * 3


def test_max_affected_refuses_a_delete_past_it_and_keeps_the_rows(service, fresh_places):
    ids = fresh_places(2)
    with pytest.raises(APIError) as refused:
        service.table("places").delete().in_("id", ids).max_affected(1).execute()
    assert refused.value.code == "PGRST124"
    assert len(service.table("places").select("id").in_("id", ids).execute().data) == 2
    service.table("places").delete().in_("id", ids).max_affected(2).execute()
    assert service.table("places").select("id").in_("id", ids).execute().data == []


def test_strip_nulls_leaves_null_members_out(service, fresh_places):
    ids = fresh_places(1)
    stripped = service.table("places").select("id,name_en").eq("id", ids[0]).strip_nulls().execute().data
    assert stripped == [{"id": ids[0]}]
    single = service.table("places").select("id,name_en").eq("id", ids[0]).strip_nulls().single().execute().data
    assert single == {"id": ids[0]}
    kept = service.table("places").select("id,name_en").eq("id", ids[0]).execute().data
    assert kept == [{"id": ids[0], "name_en": None}]

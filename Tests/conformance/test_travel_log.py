"""TravelLog (Safar) through the official supabase client against a live `caravan serve`: the reference data
imported with `caravan import world` (a real subset of the GeoNames files: Switzerland, Namibia, Saudi Arabia, the
UAE), city search as an RPC, and the policy matrix (anon, user A, user B, service role × select, insert,
update, delete on countries, cities, user_city and user_place)."""

from __future__ import annotations

import csv
import io
import json
import uuid

import pytest
from postgrest.exceptions import APIError
from supabase import Client, ClientOptions, create_client

from conftest import SHARED_DATA, _run, auth_environment, serving
from deployments import new_deployment

COUNTRIES = SHARED_DATA / "world" / "countries.csv"
CITIES = SHARED_DATA / "world" / "world_cities15000.csv"
CODES = {"CH", "NA", "SA", "AE"}
PASSWORD = "correct-horse-9"
WINDHOEK, ZURICH, RIYADH = 3352136, 2657896, 108410


def _subset(path, column: str, tmp) -> tuple[str, int]:
    with open(path, encoding="utf-8", newline="") as source:
        reader = csv.DictReader(source)
        rows = [row for row in reader if row[column] in CODES]
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=reader.fieldnames, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    target = tmp / path.name
    target.write_text(out.getvalue(), encoding="utf-8")
    return str(target), len(rows)


@pytest.fixture(scope="module")
def world(tmp_path_factory, apple_issuer):
    if not COUNTRIES.is_file() or not CITIES.is_file():
        pytest.skip(f"needs {COUNTRIES} and {CITIES}")
    tmp = tmp_path_factory.mktemp("world")
    countries, country_count = _subset(COUNTRIES, "iso2", tmp)
    cities, city_count = _subset(CITIES, "country_code", tmp)
    deployment = new_deployment("caravan-travel-")
    try:
        imported = _run("import", "world", "--countries", countries, "--cities", cities, *deployment.args, "--json")
        assert imported.returncode == 0, imported.stderr
        summary = json.loads(imported.stdout)
        assert summary["countries"]["inserted"] == country_count == 4
        assert summary["cities"]["inserted"] == city_count and summary["rejected"] == 0, summary["rejections"][:3]
        again = json.loads(_run("import", "world", "--countries", countries, "--cities", cities, *deployment.args, "--json").stdout)
        assert again["cities"]["updated"] == city_count and again["cities"]["inserted"] == 0
        keys = json.loads(_run("keys", *deployment.args, "--json").stdout)
        with serving(deployment, auth_environment(apple_issuer), log_name="travel.log") as (_, url):
            yield {"url": url, "anon": keys["anon_key"], "service": keys["service_role_key"], "cities": city_count}
    finally:
        deployment.remove()


def _client(world, key: str) -> Client:
    return create_client(world["url"], key, options=ClientOptions(auto_refresh_token=False))


@pytest.fixture(scope="module")
def anon(world) -> Client:
    return _client(world, world["anon"])


@pytest.fixture(scope="module")
def service(world) -> Client:
    return _client(world, world["service"])


def _signed_up(world) -> tuple[Client, str]:
    client = _client(world, world["anon"])
    response = client.auth.sign_up({"email": f"traveller-{uuid.uuid4().hex[:10]}@example.com", "password": PASSWORD})
    return client, response.user.id


@pytest.fixture(scope="module")
def user_a(world):
    return _signed_up(world)


@pytest.fixture(scope="module")
def user_b(world):
    return _signed_up(world)


def test_search_cities_folds_and_ranks(anon):
    for q in ["zurich", "ZÜRICH"]:
        rows = anon.rpc("search_cities", {"q": q}).execute().data
        assert rows[0]["id"] == ZURICH and rows[0]["rank"] == 1
    rows = anon.rpc("search_cities", {"q": "الرياض", "max_results": 3}).execute().data
    assert rows[0]["id"] == RIYADH and len(rows) <= 3
    assert [r["id"] for r in anon.rpc("search_cities", {"q": "windhoek"}).execute().data] == [WINDHOEK]
    assert anon.rpc("search_countries", {"q": "NA"}).execute().data[0]["name"] == "Namibia"


@pytest.mark.parametrize("q", ["", "   ", "x" * 201])
def test_blank_or_overlong_queries_are_22023(anon, q):
    with pytest.raises(APIError) as error:
        anon.rpc("search_cities", {"q": q}).execute()
    assert error.value.code == "22023"


def test_hostile_queries_are_just_text(anon):
    for q in ["%", "_", "' OR 1=1 --", "\"; DROP TABLE cities; --", "*"]:
        assert anon.rpc("search_cities", {"q": q}).execute().data == []
    assert anon.table("cities").select("id", count="exact").execute().count > 0


def test_user_flow_add_mark_remove(user_a):
    client, user_id = user_a
    added = client.rpc("add_user_city", {"city_id": WINDHOEK, "visited": True, "rating": 7.3, "notes": "dunes",
                                         "places": [{"name": "Joe's Beerhouse", "latitude": -22.55, "longitude": 17.09,
                                                     "category": "restaurant", "liked": True}]}).execute().data
    assert added[0]["user_id"] == user_id and added[0]["rating"] == 7.3
    client.rpc("mark_city_visited", {"city_id": ZURICH, "rating": 9}).execute()
    mine = client.rpc("user_cities", {}).execute().data
    assert {row["city_id"] for row in mine} == {WINDHOEK, ZURICH}
    grouped = client.rpc("user_city_places", {"city_id": WINDHOEK}).execute().data
    assert [p["name"] for p in grouped["restaurant"]] == ["Joe's Beerhouse"] and grouped["hotel"] == []
    removed = client.rpc("remove_user_city", {"city_id": WINDHOEK}).execute().data
    assert removed == {"removed": WINDHOEK, "adjusted": [{"city_id": ZURICH, "old": 9, "new": 10}]}
    assert client.table("user_place").select("id").execute().data == []


def test_policy_matrix(world, anon, service, user_a, user_b):
    a, a_id = user_a
    b, b_id = user_b
    a.table("user_city").insert({"city_id": RIYADH}).execute()  # user_id defaults to the caller
    place = a.table("user_place").insert({"city_id": RIYADH, "name": "Diriyah", "latitude": 24.73, "longitude": 46.57,
                                          "category": "activity"}).execute().data[0]
    assert place["user_id"] == a_id

    # select
    assert len(anon.table("cities").select("id").execute().data) == world["cities"]
    assert anon.table("user_city").select("id").execute().data == []
    assert b.table("user_city").select("id").execute().data == []
    assert b.table("user_place").select("id").execute().data == []
    assert {r["user_id"] for r in service.table("user_city").select("user_id").execute().data} == {a_id}

    # insert
    for client in (anon, a, b):
        for table, row in [("countries", {"id": 1, "name": "X", "country_code": "XX"}),
                           ("cities", {"id": 1, "display_name": "X", "plain_name": "X", "country_id": 3355338, "latitude": 0, "longitude": 0})]:
            with pytest.raises(APIError) as refused:
                client.table(table).insert(row).execute()
            assert refused.value.code == "42501"
    for client in (anon, b):
        with pytest.raises(APIError) as refused:
            client.table("user_city").insert({"user_id": a_id, "city_id": ZURICH}).execute()
        assert refused.value.code == "42501"
    with pytest.raises(APIError) as orphan:  # B has no user_city row for Riyadh
        b.table("user_place").insert({"city_id": RIYADH, "name": "X", "latitude": 0, "longitude": 0, "category": "shop"}).execute()
    assert orphan.value.code == "23503"

    # update and delete: others' rows are invisible (0 rows), reference data is closed
    for client in (anon, b):
        assert client.table("user_city").update({"notes": "hacked"}).eq("city_id", RIYADH).execute().data == []
        assert client.table("user_place").delete().eq("id", place["id"]).execute().data == []
    for client in (anon, a, b):
        assert client.table("cities").update({"population": 1}).eq("id", RIYADH).execute().data == []
        assert client.table("countries").delete().eq("country_code", "NA").execute().data == []
    assert service.table("cities").update({"population": 4205962}).eq("id", RIYADH).execute().data[0]["population"] == 4205962

    # the search's token table is internal: not a REST table, even for the service role
    for client in (anon, service):
        with pytest.raises(APIError) as hidden:
            client.table("city_name_tokens").select("*").execute()
        assert hidden.value.code == "PGRST205"

    # the owner may: the place goes with its city row
    assert a.table("user_city").update({"notes": "mine"}).eq("city_id", RIYADH).execute().data[0]["notes"] == "mine"
    assert len(a.table("user_city").delete().eq("city_id", RIYADH).execute().data) == 1
    assert a.table("user_place").select("id").eq("id", place["id"]).execute().data == []


def test_user_city_and_user_place_sync_through_caravan_client(world, tmp_path):
    """Offline-first: the SDK writes a city row and its place locally, pushes them, and a second device of the same
    user pulls them; the server holds them once, owned by the user."""
    import os
    import subprocess

    from conftest import CARAVAN_BIN

    client_bin = CARAVAN_BIN.parent / "caravan-client"
    if not client_bin.is_file():
        pytest.fail(f"caravan-client not found at {client_bin}: run `swift build`")

    def run(store: str, *args: str) -> str:
        env = {**os.environ, "CARAVAN_CLIENT_URL": world["url"], "CARAVAN_CLIENT_APIKEY": world["anon"], "CARAVAN_CLIENT_STORE": store}
        done = subprocess.run([str(client_bin), *args], capture_output=True, text=True, timeout=300, env=env, check=False)
        assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done.stdout

    email = f"device-{uuid.uuid4().hex[:10]}@example.com"
    phone = str(tmp_path / "phone.sqlite")
    user_id = json.loads(run(phone, "sign-up", "--email", email, "--password", PASSWORD))["user_id"]
    run(phone, "insert", "user_city", json.dumps({"user_id": user_id, "city_id": ZURICH, "visited": True, "rating": 8.5}))
    run(phone, "insert", "user_place", json.dumps({"user_id": user_id, "city_id": ZURICH, "name": "Kunsthaus", "latitude": 47.37,
                                                   "longitude": 8.55, "category": "activity", "liked": None}))
    pushed = json.loads(run(phone, "sync", "--tables", "user_city,user_place", "--json"))
    assert pushed["pushed"] == 2 and pushed["rejected"] == 0
    assert json.loads(run(phone, "outbox"))["pending"] == []

    tablet = str(tmp_path / "tablet.sqlite")
    run(tablet, "sign-in", "--email", email, "--password", PASSWORD)
    pulled = json.loads(run(tablet, "sync", "--tables", "user_city,user_place", "--json"))
    assert pulled["pulled"] == 2
    cities = json.loads(run(tablet, "rows", "user_city"))
    places = json.loads(run(tablet, "rows", "user_place"))
    assert [(c["city_id"], c["rating"], c["user_id"]) for c in cities] == [(ZURICH, 8.5, user_id)]
    assert [(p["name"], p["category"], p["liked"]) for p in places] == [("Kunsthaus", "activity", None)]


def test_cities_embed_their_country_and_countries_their_cities(anon):
    """Resource embedding on a landed app: many-to-one (`cities → countries`) is the country's own row; one-to-many
    (`countries → cities`) with the embed's order and limit is the top of the country's own city list."""
    cities = anon.table("cities").select("id, display_name, country_id, home:countries(*)").order("id").limit(50).execute().data
    assert cities
    countries = {c["id"]: c for c in anon.table("countries").select("*").execute().data}
    assert all(city["home"] == countries[city["country_id"]] for city in cities)
    country = cities[0]["country_id"]
    embedded = (anon.table("countries").select("id, cities(id, population)").eq("id", country)
                .order("population", desc=True, foreign_table="cities").limit(3, foreign_table="cities").execute().data)
    direct = anon.table("cities").select("id, population").eq("country_id", country).order("population", desc=True).order("id").execute().data
    assert [c["population"] for c in embedded[0]["cities"]] == [c["population"] for c in direct[:3]]


def test_removals_at_the_same_moment_end_as_one_after_the_other(world, anon):
    """One user's removals run one after the other (each re-spreads the ratings the others left): three removals
    sent at once leave the same ratings as the three sent in some order, one after the other, by users with the
    same list (every order is tried)."""
    from concurrent.futures import ThreadPoolExecutor
    from itertools import permutations

    ids = [row["id"] for row in anon.table("cities").select("id").order("population", desc=True).limit(6).execute().data]
    assert len(ids) == 6
    ratings = [9, 7.5, 6, 8.2, 3, 5.5]
    removed = ids[:3]

    def traveller():
        client, _ = _signed_up(world)
        for city, rating in zip(ids, ratings):
            client.rpc("add_user_city", {"city_id": city, "visited": True, "rating": rating}).execute()
        return client

    def remaining(client):
        return sorted((row["city_id"], row["rating"]) for row in client.rpc("user_cities", {}).execute().data)

    at_once = traveller()
    with ThreadPoolExecutor(max_workers=len(removed)) as pool:
        list(pool.map(lambda city: at_once.rpc("remove_user_city", {"city_id": city}).execute(), removed))
    outcomes = []
    for order in permutations(removed):
        client = traveller()
        for city in order:
            client.rpc("remove_user_city", {"city_id": city}).execute()
        outcomes.append(remaining(client))
    assert remaining(at_once) in outcomes

"""A deployment made by an older binary opens and serves unchanged under this one: the SQLite data directory and the
PostgreSQL database in fixtures/old-deployment were created by `caravan` at the commit named in expected.json
(before Caravan's users table became `auth_users`), by fixtures/make_old_deployment.py. This binary migrates them in
place (system-0006 and nothing else), accepts the API keys and the password issued back then, serves the rows, and
keeps the foreign keys that pointed at the renamed table working."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
from supabase import ClientOptions, create_client

from conftest import CARAVAN_BIN, auth_environment, serving
from deployments import ENGINE, new_deployment

FIXTURE = Path(__file__).parent / "fixtures" / "old-deployment"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text())
OLD = EXPECTED[ENGINE]


def caravan(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CARAVAN_BIN), *args], capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture
def old_deployment():
    deployment = new_deployment("caravan-old-deployment-", empty=True)
    if ENGINE == "sqlite":
        for name in ("caravan.sqlite", "jwt_secret.json"):
            shutil.copy(FIXTURE / name, deployment.data_dir / name)
        # git keeps no file modes: the secret gets the 0600 the old binary gave it (caravan refuses a readable one)
        (deployment.data_dir / "jwt_secret.json").chmod(0o600)
    else:
        loaded = subprocess.run(["psql", "--quiet", "--no-psqlrc", "-v", "ON_ERROR_STOP=1", "--dbname", deployment.database_url,
                                 "--file", str(FIXTURE / "postgres.sql")], capture_output=True, text=True, timeout=300)
        assert loaded.returncode == 0, loaded.stderr
    yield deployment
    deployment.remove()


def test_an_old_deployment_migrates_in_place_and_serves_what_it_had(old_deployment, apple_issuer):
    migrated = caravan("migrate", *old_deployment.args)
    assert migrated.returncode == 0, migrated.stderr
    applied = migrated.stdout.split()
    # Every migration once, the rename right after what the old binary had, then the apps it did not have.
    assert len(applied) == len(set(applied)), applied
    assert applied.index("system-0006-auth-users") == applied.index("places-0004-search-plans") + 1, applied
    assert {"travel-0001-create", "group-decisions-0001-create"} <= set(applied[applied.index("system-0006-auth-users"):])
    assert {"system-0001-users", "auth-0001-create", "places-0004-search-plans"} <= set(applied)

    with serving(old_deployment, auth_environment(apple_issuer)) as (_, url):
        anon_key = OLD["anon_key"]  # issued by the old binary
        places = httpx.get(f"{url}/rest/v1/places", params={"select": "id"}, headers={"apikey": anon_key}, timeout=30)
        assert places.status_code == 200 and len(places.json()) == 3, places.text

        user = create_client(url, anon_key, options=ClientOptions(auto_refresh_token=False, persist_session=False))
        session = user.auth.sign_in_with_password({"email": EXPECTED["email"], "password": EXPECTED["password"]}).session
        assert session.user.id == OLD["user_id"]
        favorites = user.table("favorites").select("place_id,note").execute().data
        assert favorites == [{"place_id": OLD["place_id"], "note": "from the old binary"}]

        # The favorites' foreign key followed the renamed users table: a new favorite needs a real user, and
        # deleting the user deletes their favorites.
        other_place = next(p["id"] for p in places.json() if p["id"] != OLD["place_id"])
        user.table("favorites").insert({"user_id": OLD["user_id"], "place_id": other_place}).execute()
        service = create_client(url, OLD["service_role_key"], options=ClientOptions(auto_refresh_token=False, persist_session=False))
        with pytest.raises(Exception) as refused:
            service.table("favorites").insert({"user_id": "00000000-0000-4000-8000-000000000000", "place_id": other_place}).execute()
        assert "23503" in str(refused.value)
        service.auth.admin.delete_user(OLD["user_id"])
        left = service.table("favorites").select("id", count="exact").execute()
        assert left.count == 0

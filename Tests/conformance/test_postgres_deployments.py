"""PostgreSQL deployments end to end, with real processes: `caravan copy` from a SQLite data directory into a fresh
database (report, REST reads, tokens issued before the copy), and two `caravan serve --database` instances on one
database (shared signing secret, each reading the other's writes). Runs in the PostgreSQL pass of scripts/test."""

from __future__ import annotations

import json
import subprocess
import uuid
from typing import Any

import httpx
import pytest
from supabase import Client, ClientOptions, create_client

from conftest import CARAVAN_BIN, PLACES_JSON, auth_environment, serving
from deployments import ENGINE, Deployment, new_deployment

pytestmark = pytest.mark.skipif(ENGINE != "postgres", reason="PostgreSQL deployments: CARAVAN_TEST_ENGINE=postgres")

PASSWORD = "correct-horse-9"


def caravan(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CARAVAN_BIN), *args], capture_output=True, text=True, timeout=300, check=False)


def keys_of(deployment: Deployment) -> dict[str, str]:
    run = caravan("keys", *deployment.args, "--json")
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def new_client(url: str, key: str) -> Client:
    return create_client(url, key, options=ClientOptions(auto_refresh_token=False, persist_session=False))


def all_rows(url: str, key: str, table: str, order: str) -> list[dict[str, Any]]:
    """Every row of `table` through REST, paged past the 1,000-row cap."""
    rows: list[dict[str, Any]] = []
    while True:
        r = httpx.get(f"{url}/rest/v1/{table}", params={"select": "*", "order": order, "offset": len(rows), "limit": 1000},
                      headers={"apikey": key, "Authorization": f"Bearer {key}"}, timeout=60)
        assert r.status_code == 200, r.text[:500]
        page = r.json()
        rows += page
        if len(page) < 1000:
            return rows


@pytest.fixture
def sqlite_source():
    source = new_deployment("caravan-copy-source-", engine="sqlite")
    yield source
    source.remove()


@pytest.fixture
def postgres_target():
    target = new_deployment("caravan-copy-target-", engine="postgres", empty=True)
    yield target
    target.remove()


def test_copy_moves_a_deployment_and_its_tokens(places_source, apple_issuer, sqlite_source, postgres_target):
    source, target = sqlite_source, postgres_target
    imported = caravan("import", "places", str(PLACES_JSON), *source.args, "--json")
    assert imported.returncode == 0, imported.stderr
    admin = caravan("user", "create", "--email", "admin@example.com", "--password", PASSWORD, "--role", "admin", *source.args)
    assert admin.returncode == 0, admin.stderr
    source_keys = keys_of(source)
    env = auth_environment(apple_issuer)

    with serving(source, env) as (_, url):
        user = new_client(url, source_keys["anon_key"])
        session = user.auth.sign_up({"email": f"copy-{uuid.uuid4().hex[:8]}@example.com", "password": PASSWORD}).session
        place_id = places_source[0]["id"]
        user.table("favorites").insert({"user_id": session.user.id, "place_id": place_id, "note": "قهوة"}).execute()
        service = new_client(url, source_keys["service_role_key"])
        service.table("categories").insert({"id": "copy-test", "name_ar": "نسخ", "name_en": "Copy test"}).execute()  # beside the ones the import made
        service.table("places").update({"price_range": "$$"}).eq("id", place_id).execute()
        user.auth.sign_in_with_otp({"email": "otp-" + uuid.uuid4().hex[:8] + "@example.com"})
        # A sync client: a cursor on the source's history, and a pushed mutation whose verdict must travel along.
        sync_headers = {"apikey": source_keys["anon_key"], "Authorization": f"Bearer {session.access_token}"}
        pulled = httpx.get(f"{url}/sync/v1/pull", params={"tables": "favorites"}, headers=sync_headers, timeout=30)
        assert pulled.status_code == 200 and len(pulled.json()["changes"]) == 1
        sync_cursor = pulled.json()["cursor"]
        mutation = {"id": str(uuid.uuid4()), "table": "favorites", "op": "update", "key": {"id": pulled.json()["changes"][0]["key"]["id"]},
                    "record": {"note": "قهوة"}}
        pushed = httpx.post(f"{url}/sync/v1/push", json={"mutations": [mutation]}, headers=sync_headers, timeout=30)
        assert pushed.status_code == 200 and pushed.json()["results"][0]["status"] == "applied"
        before = {table: all_rows(url, source_keys["service_role_key"], table, "id.asc") for table in ("places", "favorites", "categories")}

    copied = caravan("copy", "--from", str(source.data_dir), "--to", target.database_url, "--json")
    assert copied.returncode == 0, copied.stdout + copied.stderr
    report = json.loads(copied.stdout)
    counts = {entry["table"]: entry for entry in report["tables"]}
    assert report["ok"] is True and report["replaced"] is False
    assert all(entry["ok"] and entry["source_checksum"] == entry["target_checksum"] for entry in report["tables"]), report
    assert counts["places"]["target_rows"] == len(places_source)
    assert counts["auth_users"]["target_rows"] == 3  # the admin, the signed-up user, the one-time-code user
    categories = len({(entry.get("category_en") or "other").strip() for entry in places_source}) + 1
    assert counts["favorites"]["target_rows"] == 1 and counts["categories"]["target_rows"] == categories
    assert counts["caravan_secrets"]["target_rows"] == 1
    assert counts["caravan_sync_mutations"]["target_rows"] == 1
    assert counts["auth_sessions"]["target_rows"] >= 1 and counts["auth_refresh_tokens"]["target_rows"] >= 1
    assert counts["auth_outbox"]["target_rows"] == 1 and counts["auth_codes"]["target_rows"] == 1
    # The import (places, then its areas and categories), the favorite, the category and the update are in the change
    # log, seq values kept.
    assert counts["caravan_changes"]["target_rows"] == counts["caravan_changes"]["source_rows"] >= len(places_source) + 3
    assert list(counts).index("auth_users") < list(counts).index("favorites")

    # The same keys on the target, and a second copy is refused until --force.
    assert keys_of(target) == source_keys
    again = caravan("copy", "--from", str(source.data_dir), "--to", target.database_url)
    assert again.returncode != 0 and "targetNotEmpty" in again.stderr and "--force" in again.stderr
    forced = caravan("copy", "--from", str(source.data_dir), "--to", target.database_url, "--force", "--json")
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["replaced"] is True

    with serving(target, env) as (_, url):
        after = {table: all_rows(url, source_keys["service_role_key"], table, "id.asc") for table in before}
        assert after == before
        # The access token issued by the SQLite deployment is accepted, for auth and for REST under policy.
        headers = {"apikey": source_keys["anon_key"], "Authorization": f"Bearer {session.access_token}"}
        me = httpx.get(f"{url}/auth/v1/user", headers=headers, timeout=30)
        assert me.status_code == 200 and me.json()["id"] == session.user.id
        mine = httpx.get(f"{url}/rest/v1/favorites?select=place_id,note", headers=headers, timeout=30)
        assert mine.json() == [{"place_id": place_id, "note": "قهوة"}]
        # The copy is another history: a sync cursor from the source must refetch; a pushed verdict is still known.
        stale = httpx.get(f"{url}/sync/v1/pull", params={"tables": "favorites", "cursor": sync_cursor}, headers=headers, timeout=30)
        assert stale.status_code == 409 and stale.json()["code"] == "CARAVAN_MUST_REFETCH"
        replay = httpx.post(f"{url}/sync/v1/push", json={"mutations": [mutation]}, headers=headers, timeout=30)
        assert replay.json()["results"][0] == {**pushed.json()["results"][0], "replayed": True}
        # The refresh token and the password (its bcrypt hash) came along.
        client = new_client(url, source_keys["anon_key"])
        refreshed = client.auth.refresh_session(session.refresh_token)
        assert refreshed.session.user.id == session.user.id
        assert client.auth.sign_in_with_password({"email": "admin@example.com", "password": PASSWORD}).user.app_metadata["role"] == "admin"
        # New writes continue the change log after the copied seq values.
        last_seq = target.fetch_one("SELECT max(seq) FROM caravan_changes")[0]
        service = new_client(url, source_keys["service_role_key"])
        service.table("categories").insert({"id": "after-copy", "name_ar": "بعد", "name_en": "After the copy"}).execute()
        assert target.fetch_one("SELECT max(seq) FROM caravan_changes")[0] == last_seq + 1


def test_copy_names_the_table_whose_checksum_differs(sqlite_source, postgres_target):
    source, target = sqlite_source, postgres_target
    created = caravan("user", "create", "--email", "someone@example.com", "--password", PASSWORD, *source.args)
    assert created.returncode == 0, created.stderr
    assert caravan("migrate", *target.args).returncode == 0
    # A rule (not a trigger, so the copy does not switch it off) makes the target drop every user it is given.
    import psycopg

    with psycopg.connect(target.database_url, autocommit=True) as db:
        db.execute('CREATE RULE "lose_users" AS ON INSERT TO "auth_users" DO INSTEAD NOTHING')
        db.execute('ALTER TABLE "auth_identities" DROP CONSTRAINT "auth_identities_user_id_fkey"')
    copied = caravan("copy", "--from", str(source.data_dir), "--to", target.database_url)
    assert copied.returncode != 0
    assert "checksumMismatch" in copied.stderr and "table auth_users" in copied.stderr, copied.stderr
    assert "MISMATCH" in copied.stdout


def test_copy_moves_the_stored_objects_bytes(apple_issuer, sqlite_source, postgres_target):
    """The SQLite source's storage/ files become storage_object_chunks rows of the target, checked in the report:
    every object downloads with the same bytes from the PostgreSQL deployment."""
    from test_backup import check_objects, store_objects

    key = keys_of(sqlite_source)["service_role_key"]
    with serving(sqlite_source, auth_environment(apple_issuer)) as (_, url):
        objects = store_objects(url, key)
    copied = caravan("copy", "--from", str(sqlite_source.data_dir), "--to", postgres_target.database_url, "--json")
    assert copied.returncode == 0, copied.stdout + copied.stderr
    report = json.loads(copied.stdout)
    lines = {entry["table"]: entry for entry in report["tables"]}
    assert report["ok"] is True, report
    assert lines["storage (object bytes)"]["source_rows"] == lines["storage (object bytes)"]["target_rows"] == len(objects)
    with serving(postgres_target, auth_environment(apple_issuer)) as (_, url):
        check_objects(url, key, objects)


def test_copy_refuses_a_missing_source_and_a_non_postgres_target(tmp_path, postgres_target):
    missing = caravan("copy", "--from", str(tmp_path / "nothing"), "--to", postgres_target.database_url)
    assert missing.returncode != 0 and "sourceMissing" in missing.stderr
    (tmp_path / "caravan.sqlite").touch()
    not_postgres = caravan("copy", "--from", str(tmp_path), "--to", "mysql://localhost/x")
    assert not_postgres.returncode != 0 and "postgres://" in not_postgres.stderr


def test_two_instances_share_the_secret_and_the_data(apple_issuer, postgres_target):
    shared = postgres_target
    other = Deployment(shared.data_dir / "second", shared.database_url)  # another data directory, the same database
    other.data_dir.mkdir()
    env = auth_environment(apple_issuer)
    # Both start on an empty database at once: migrations and the signing secret are made once.
    with serving(shared, env, "first.log") as (_, first_url), serving(other, env, "second.log") as (_, second_url):
        keys = keys_of(shared)
        assert keys_of(other) == keys
        for url in (first_url, second_url):
            health = httpx.get(f"{url}/rest/v1/categories?select=id", headers={"apikey": keys["anon_key"]}, timeout=30)
            assert health.status_code == 200, health.text
        first = new_client(first_url, keys["anon_key"])
        session = first.auth.sign_up({"email": f"two-{uuid.uuid4().hex[:8]}@example.com", "password": PASSWORD}).session
        # A token the first instance issued is accepted by the second.
        me = httpx.get(f"{second_url}/auth/v1/user", headers={"apikey": keys["anon_key"], "Authorization": f"Bearer {session.access_token}"}, timeout=30)
        assert me.status_code == 200 and me.json()["id"] == session.user.id
        # A write through one is read through the other.
        new_client(first_url, keys["service_role_key"]).table("categories").insert({"id": "cafe", "name_ar": "مقاهي", "name_en": "Cafes"}).execute()
        read = new_client(second_url, keys["anon_key"]).table("categories").select("id,name_en").execute().data
        assert read == [{"id": "cafe", "name_en": "Cafes"}]
        second = new_client(second_url, keys["anon_key"])
        signed_in = second.auth.sign_in_with_password({"email": session.user.email, "password": PASSWORD}).session
        back = httpx.get(f"{first_url}/auth/v1/user", headers={"apikey": keys["anon_key"], "Authorization": f"Bearer {signed_in.access_token}"}, timeout=30)
        assert back.status_code == 200 and back.json()["id"] == session.user.id


def test_instances_starting_together_make_one_secret(postgres_target):
    # Four processes on an empty database at once create it: each migrates under the advisory lock, and every
    # migration is applied once. Then four at once make the secret on first use: one secret is stored and every
    # process prints the keys it signs. (`keys` alone refuses a database that holds no deployment.)
    def together(*command: str) -> list[tuple[str, str]]:
        runs = [subprocess.Popen([str(CARAVAN_BIN), *command, *postgres_target.args], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for _ in range(4)]
        outputs = [run.communicate(timeout=120) for run in runs]
        assert all(run.returncode == 0 for run in runs), [err for _, err in outputs]
        return outputs

    migrated = together("migrate")
    assert len({out for out, _ in migrated}) == 1, "every process lists the same applied migrations"
    assert sum("created a new deployment" in err for _, err in migrated) >= 1
    outputs = together("keys", "--json")
    assert len({out for out, _ in outputs}) == 1
    assert postgres_target.fetch_one("SELECT count(*) FROM caravan_secrets")[0] == 1

"""Per-user export: the `export_my_data` RPC and `caravan export user` (JSON, and CSV as a ZIP) give exactly the
user's rows of every owned table — the same rows an independent REST query by `user_id` returns — and their profile
without credentials; nobody else's rows."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import uuid
import zipfile

import httpx
import pytest

from conftest import CARAVAN_BIN

PASSWORD = "correct-horse-9"


def sign_up(server) -> tuple[str, str, str]:
    email = f"export-{uuid.uuid4().hex[:10]}@example.com"
    r = httpx.post(f"{server.url}/auth/v1/signup", json={"email": email, "password": PASSWORD},
                   headers={"apikey": server.anon_key}, timeout=30)
    assert r.status_code == 200, r.text
    return email, r.json()["user"]["id"], r.json()["access_token"]


def as_user(server, token: str) -> httpx.Client:
    return httpx.Client(base_url=server.rest_url, timeout=30,
                        headers={"apikey": server.anon_key, "Authorization": f"Bearer {token}", "Prefer": "return=representation"})


@pytest.fixture(scope="module")
def people(server, places):
    """Two users with favorites and a review each."""
    made = []
    for n in range(2):
        email, user_id, token = sign_up(server)
        client = as_user(server, token)
        for place in places[n * 3:n * 3 + 2]:
            assert client.post("/favorites", json={"user_id": user_id, "place_id": place["id"], "note": f"note, \"{n}\"\nline"}).status_code == 201
        review = {"user_id": user_id, "place_id": places[n * 3]["id"], "rating": 4 + n, "text_ar": "ممتاز", "photos": ["a.jpg"]}
        assert client.post("/reviews", json=review).status_code == 201
        made.append({"email": email, "id": user_id, "token": token})
    return made


def rest_rows(server, table: str, user_id: str) -> list[dict]:
    """The independent query: the user's rows by their owner column, as the service role sees them, in id order."""
    r = httpx.get(f"{server.rest_url}/{table}", params={"user_id": f"eq.{user_id}", "order": "id.asc"},
                  headers={"apikey": server.service_role_key}, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def caravan(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CARAVAN_BIN), *args], capture_output=True, text=True, timeout=120, check=False)


def test_export_my_data_matches_rest(server, people):
    me, other = people
    r = httpx.post(f"{server.rest_url}/rpc/export_my_data", json={}, timeout=30,
                   headers={"apikey": server.anon_key, "Authorization": f"Bearer {me['token']}"})
    assert r.status_code == 200, r.text
    export = r.json()
    assert export["user_id"] == me["id"]
    assert export["user"]["email"] == me["email"] and export["user"]["id"] == me["id"]
    assert "encrypted_password" not in export["user"]
    # Every table the user owns in the apps served (places, travel log, group decisions…): theirs here are
    # favorites and reviews; the others are present and empty.
    assert {"favorites", "reviews"} <= set(export["tables"])
    assert all(rows == [] for table, rows in export["tables"].items() if table not in ("favorites", "reviews")), export["tables"]
    for table in ("favorites", "reviews"):
        assert export["tables"][table] == rest_rows(server, table, me["id"]), table
    assert len(export["tables"]["favorites"]) == 2 and len(export["tables"]["reviews"]) == 1
    everything = json.dumps(export)
    assert other["id"] not in everything and other["email"] not in everything
    # It only reads, so GET calls it too (PostgREST's rule for STABLE functions), with the same answer.
    got = httpx.get(f"{server.rest_url}/rpc/export_my_data", timeout=30,
                    headers={"apikey": server.anon_key, "Authorization": f"Bearer {me['token']}"})
    assert got.status_code == 200, got.text
    assert got.json()["tables"] == export["tables"] and got.json()["user"] == export["user"]


def test_export_my_data_needs_a_user(server):
    r = httpx.post(f"{server.rest_url}/rpc/export_my_data", json={}, headers={"apikey": server.anon_key}, timeout=30)
    assert r.status_code == 401 and r.json()["code"] == "42501"


def test_cli_export_json_and_csv(server, people, tmp_path):
    me = people[1]
    run = caravan("export", "user", me["email"], *server.deployment.args)
    assert run.returncode == 0, run.stderr
    export = json.loads(run.stdout)
    for table in ("favorites", "reviews"):
        assert export["tables"][table] == rest_rows(server, table, me["id"]), table

    archive = tmp_path / "export.zip"
    run = caravan("export", "user", me["id"], "--format", "csv", "--out", str(archive), *server.deployment.args)
    assert run.returncode == 0, run.stderr
    assert archive.stat().st_mode & 0o077 == 0
    with zipfile.ZipFile(archive) as z:
        assert {"favorites.csv", "reviews.csv", "user.csv"} <= set(z.namelist())
        for other in set(z.namelist()) - {"favorites.csv", "reviews.csv", "user.csv"}:
            assert len(z.read(other).decode().strip().splitlines()) <= 1, other  # a header at most: nothing of theirs
        favorites = list(csv.DictReader(io.StringIO(z.read("favorites.csv").decode())))
        profile = list(csv.DictReader(io.StringIO(z.read("user.csv").decode())))
    expected = rest_rows(server, "favorites", me["id"])
    assert [row["id"] for row in favorites] == [row["id"] for row in expected]
    assert [row["note"] for row in favorites] == [row["note"] for row in expected]  # quotes, commas, newlines survive
    assert profile[0]["email"] == me["email"] and "encrypted_password" not in profile[0]

    missing = caravan("export", "user", str(uuid.uuid4()), *server.deployment.args)
    assert missing.returncode != 0 and "user_not_found" in (missing.stderr + missing.stdout)

    unwritable = caravan("export", "user", me["id"], "--out", str(tmp_path / "no-such-folder" / "export.json"), *server.deployment.args)
    assert unwritable.returncode != 0 and "outputUnwritable" in (unwritable.stderr + unwritable.stdout), unwritable.stderr


def test_export_lists_my_storage_objects_with_signed_urls(server, people, tmp_path):
    """The user's storage objects (every bucket) are in the export with a signed URL that downloads the same bytes
    without a key; another user's object in the same bucket is not listed."""
    me, other = people
    bucket = f"export-{uuid.uuid4().hex[:8]}"
    service = {"apikey": server.service_role_key, "Authorization": f"Bearer {server.service_role_key}"}
    r = httpx.post(f"{server.url}/storage/v1/bucket", json={"id": bucket, "name": bucket}, headers=service, timeout=30)
    assert r.status_code == 200, r.text

    def upload(person, name: str, data: bytes, content_type: str) -> None:
        r = httpx.post(f"{server.url}/storage/v1/object/{bucket}/{name}", content=data, timeout=30,
                       headers={"apikey": server.anon_key, "Authorization": f"Bearer {person['token']}", "Content-Type": content_type})
        assert r.status_code == 200, r.text

    mine = {f"{me['id']}/notes.txt": (b"my own notes", "text/plain"),
            f"{me['id']}/deep/data.bin": (bytes(range(256)) * 40, "application/octet-stream")}
    try:
        for name, (data, content_type) in mine.items():
            upload(me, name, data, content_type)
        upload(other, f"{other['id']}/secret.txt", b"not yours", "text/plain")

        def check(objects: list[dict]) -> None:
            listed = [o for o in objects if o["bucket_id"] == bucket]
            assert [o["name"] for o in listed] == sorted(mine), listed
            for o in listed:
                data, content_type = mine[o["name"]]
                assert (o["size"], o["content_type"]) == (len(data), content_type)
                assert o["updated_at"] and o["expires_at"] > o["updated_at"]
                assert o["signed_url"].startswith(f"/storage/v1/object/sign/{bucket}/")
                fetched = httpx.get(server.url + o["signed_url"], timeout=30)  # no key: the token is the permission
                assert fetched.status_code == 200 and fetched.content == data, fetched.text[:200]
            assert all(other["id"] not in o["name"] for o in objects)

        r = httpx.post(f"{server.rest_url}/rpc/export_my_data", json={}, timeout=30,
                       headers={"apikey": server.anon_key, "Authorization": f"Bearer {me['token']}"})
        assert r.status_code == 200, r.text
        export = r.json()
        check(export["storage_objects"])
        assert "not yours" not in json.dumps(export)

        run = caravan("export", "user", me["email"], *server.deployment.args)
        assert run.returncode == 0, run.stderr
        check(json.loads(run.stdout)["storage_objects"])

        archive = tmp_path / "export-files.zip"
        run = caravan("export", "user", me["id"], "--format", "csv", "--out", str(archive), *server.deployment.args)
        assert run.returncode == 0, run.stderr
        with zipfile.ZipFile(archive) as z:
            rows = list(csv.DictReader(io.StringIO(z.read("storage_objects.csv").decode())))
        check([{**row, "size": int(row["size"])} for row in rows])
    finally:
        assert httpx.post(f"{server.url}/storage/v1/bucket/{bucket}/empty", headers=service, timeout=30).status_code == 200
        assert httpx.delete(f"{server.url}/storage/v1/bucket/{bucket}", headers=service, timeout=30).status_code == 200

"""`caravan backup` and `caravan restore` end to end on the suite's engine: a backup taken while a writer commits
through REST, restored into an empty deployment, must reproduce the backup's checksums, be consistent (every row
with its change-log entry), keep the signing secret, start a new sync epoch, and serve the rows."""

from __future__ import annotations

import json
import os
import threading
import uuid
from pathlib import Path

import httpx
import pytest

from conftest import auth_environment, serving
from deployments import CLUSTER_URL, ENGINE, Deployment, new_deployment
from test_postgres_deployments import caravan, keys_of

PASSWORD = "correct-horse-9"
OBJECT_BYTES = "storage (object bytes)"


class Writer(threading.Thread):
    """Inserts categories through REST, one transaction each, until stopped."""

    def __init__(self, url: str, key: str):
        super().__init__(daemon=True)
        self.url, self.key = url, key
        self.stop = threading.Event()
        self.written = 0
        self.failures: list[str] = []

    def run(self) -> None:
        headers = {"apikey": self.key, "Authorization": f"Bearer {self.key}", "Prefer": "return=minimal"}
        with httpx.Client(timeout=30) as client:
            while not self.stop.is_set():
                body = {"id": f"load-{uuid.uuid4().hex[:12]}", "name_ar": "حمل", "name_en": "Load"}
                r = client.post(f"{self.url}/rest/v1/categories", json=body, headers=headers)
                if r.status_code == 201:
                    self.written += 1
                else:
                    self.failures.append(f"{r.status_code} {r.text[:200]}")


@pytest.fixture
def deployments():
    made: list[Deployment] = []

    def make(prefix: str, engine: str = ENGINE, empty: bool = False) -> Deployment:
        made.append(new_deployment(prefix, engine=engine, empty=empty))
        return made[-1]

    yield make
    for deployment in made:
        deployment.remove()


def small_places_file(places_source, directory: Path) -> Path:
    path = directory / "places-200.json"
    path.write_text(json.dumps(places_source[:200], ensure_ascii=False))
    return path


def test_backup_under_write_load_restores_the_same_rows(places_source, apple_issuer, deployments, tmp_path):
    source = deployments("caravan-backup-source-")
    imported = caravan("import", "places", str(small_places_file(places_source, tmp_path)), *source.args, "--json")
    assert imported.returncode == 0, imported.stderr
    source_keys = keys_of(source)
    backup_file = tmp_path / "deployment.caravan-backup"

    with serving(source, auth_environment(apple_issuer)) as (_, url):
        user = httpx.post(f"{url}/auth/v1/signup", json={"email": f"b-{uuid.uuid4().hex[:8]}@example.com", "password": PASSWORD},
                          headers={"apikey": source_keys["anon_key"]}, timeout=30).json()
        user_headers = {"apikey": source_keys["anon_key"], "Authorization": f"Bearer {user['access_token']}"}
        favorite = httpx.post(f"{url}/rest/v1/favorites", json={"user_id": user["user"]["id"], "place_id": places_source[0]["id"]},
                              headers=user_headers, timeout=30)
        assert favorite.status_code == 201, favorite.text
        pulled = httpx.get(f"{url}/sync/v1/pull", params={"tables": "favorites"}, headers=user_headers, timeout=30)
        assert pulled.status_code == 200, pulled.text
        cursor = pulled.json()["cursor"]

        writer = Writer(url, source_keys["service_role_key"])
        writer.start()
        try:
            while writer.written < 20 and not writer.failures:
                threading.Event().wait(0.05)
            written_before = writer.written
            backup = caravan("backup", *source.args, "--out", str(backup_file), "--json")
            written_during = writer.written - written_before
        finally:
            writer.stop.set()
            writer.join(timeout=60)
        assert backup.returncode == 0, backup.stdout + backup.stderr
        assert not writer.failures, writer.failures[:3]
        live_categories = httpx.get(f"{url}/rest/v1/categories", params={"select": "id"}, timeout=30,
                                    headers={"apikey": source_keys["service_role_key"], "Prefer": "count=exact", "Range": "0-0"})
        live_count = int(live_categories.headers["content-range"].split("/")[1])

    manifest = json.loads(backup.stdout)
    assert manifest["format"] == "caravan-backup"
    assert manifest["payload"] == ("sqlite" if ENGINE == "sqlite" else "pg_dump")
    tables = {entry["table"]: entry for entry in manifest["tables"]}
    assert tables["places"]["rows"] == 200 and tables["favorites"]["rows"] == 1 and tables["auth_users"]["rows"] == 1
    assert "caravan_secrets" not in tables  # the secret is carried, and checked, apart
    assert backup_file.stat().st_mode & 0o077 == 0, "the backup holds secrets: mode 0600"
    # Point in time: the writer went on after the backup began, and the backup holds none of the later rows.
    assert written_during > 0 and tables["categories"]["rows"] < live_count

    target = deployments("caravan-backup-target-", empty=True)
    restored = caravan("restore", str(backup_file), *target.args, "--json")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    report = json.loads(restored.stdout)
    assert report["ok"] is True, report
    for entry in report["tables"]:
        if entry["table"] == OBJECT_BYTES:
            continue
        assert entry["target_rows"] == tables[entry["table"]]["rows"], entry
        assert entry["target_checksum"] == tables[entry["table"]]["checksum"], entry
    # SQLite backups carry the object files too (none here): one more line in the report.
    assert {entry["table"] for entry in report["tables"]} == set(tables) | ({OBJECT_BYTES} if ENGINE == "sqlite" else set())

    # Consistent: every category the backup holds has its change-log entry, and no entry lacks its row.
    logged = target.fetch_one("SELECT count(*) FROM caravan_changes WHERE table_name = ? AND op = ?", ("categories", "insert"))
    rows = target.fetch_one("SELECT count(*) FROM categories")
    assert logged == rows and rows[0] == tables["categories"]["rows"]

    # The same keys; a second restore into it is refused and changes nothing.
    assert keys_of(target) == source_keys
    again = caravan("restore", str(backup_file), *target.args)
    assert again.returncode != 0 and "targetNotEmpty" in again.stderr
    assert target.fetch_one("SELECT count(*) FROM categories") == rows

    with serving(target, auth_environment(apple_issuer)) as (_, url):
        restored_rows = httpx.get(f"{url}/rest/v1/favorites", params={"select": "user_id,place_id"}, headers=user_headers, timeout=30)
        assert restored_rows.json() == [{"user_id": user["user"]["id"], "place_id": places_source[0]["id"]}]
        stale = httpx.get(f"{url}/sync/v1/pull", params={"tables": "favorites", "cursor": cursor}, headers=user_headers, timeout=30)
        assert stale.status_code == 409, stale.text  # a new sync epoch: the old cursor must refetch


@pytest.mark.skipif(ENGINE != "sqlite" or not CLUSTER_URL, reason="a SQLite backup into PostgreSQL: the SQLite pass, with the test cluster")
def test_sqlite_backup_restores_into_postgres(places_source, deployments, tmp_path):
    source = deployments("caravan-backup-sqlite-", engine="sqlite")
    assert caravan("import", "places", str(small_places_file(places_source, tmp_path)), *source.args).returncode == 0
    source_keys = keys_of(source)  # makes the signing secret, which the backup must carry
    backup_file = tmp_path / "sqlite.caravan-backup"
    backup = caravan("backup", *source.args, "--out", str(backup_file), "--json")
    assert backup.returncode == 0, backup.stderr
    target = deployments("caravan-backup-pg-", engine="postgres", empty=True)
    restored = caravan("restore", str(backup_file), *target.args, "--json")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert json.loads(restored.stdout)["ok"] is True
    assert keys_of(target) == source_keys
    assert target.fetch_one("SELECT count(*) FROM places") == (200,)


@pytest.mark.skipif(ENGINE != "postgres", reason="pg_dump and pg_restore over PostgreSQL's Unix-domain socket: the PostgreSQL pass")
def test_backup_and_restore_over_the_unix_socket(places_source, deployments, tmp_path):
    """A deployment reached through the socket directory (`?host=/dir`, as libpq reads it) backs up and restores:
    pg_dump and pg_restore get the directory as their host, and the restored rows match the backup's checksums."""
    source = deployments("caravan-backup-socket-")
    target = deployments("caravan-restore-socket-", empty=True)
    directory = source.fetch_one("SHOW unix_socket_directories")[0].split(",")[0].strip()
    assert directory.startswith("/")

    def over_socket(deployment: Deployment) -> Deployment:
        return Deployment(deployment.data_dir, f"{deployment.database_url}&host={directory}")

    source, target = over_socket(source), over_socket(target)
    assert source.fetch_one("SELECT inet_server_addr() IS NULL") == (True,)  # psycopg, too, came through the socket
    assert caravan("import", "places", str(small_places_file(places_source, tmp_path)), *source.args).returncode == 0
    backup_file = tmp_path / "socket.caravan-backup"
    backup = caravan("backup", *source.args, "--out", str(backup_file), "--json")
    assert backup.returncode == 0, backup.stdout + backup.stderr
    tables = {table["table"]: table for table in json.loads(backup.stdout)["tables"]}
    assert tables["places"]["rows"] == 200
    restored = caravan("restore", str(backup_file), *target.args, "--json")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    report = json.loads(restored.stdout)
    assert report["ok"] is True, report
    for entry in report["tables"]:
        assert entry["target_checksum"] == tables[entry["table"]]["checksum"], entry
    assert target.fetch_one("SELECT count(*) FROM places") == (200,)


def test_restore_refuses_what_is_not_a_backup(deployments, tmp_path):
    bogus = tmp_path / "not-a-backup.zip"
    bogus.write_bytes(b"PK\x03\x04 this is not a Caravan backup")
    target = deployments("caravan-backup-bogus-", empty=True)
    run = caravan("restore", str(bogus), *target.args)
    assert run.returncode != 0 and "invalidBackup" in run.stderr, run.stderr
    assert not (target.data_dir / "caravan.sqlite").exists()
    existing = deployments("caravan-backup-exists-")
    assert caravan("migrate", *existing.args).returncode == 0
    out = existing.data_dir / "taken"
    out.write_text("keep me")
    refused = caravan("backup", *existing.args, "--out", str(out))
    assert refused.returncode != 0 and "outputExists" in refused.stderr and out.read_text() == "keep me"


def store_objects(url: str, key: str) -> dict[str, bytes]:
    """A bucket with objects of several sizes (one over a 1 MiB chunk), one replaced and one deleted (so their old
    bytes are gone); returns what each remaining object holds."""
    headers = {"apikey": key, "Authorization": f"Bearer {key}"}
    assert httpx.post(f"{url}/storage/v1/bucket", json={"id": "keep", "name": "keep"}, headers=headers, timeout=30).status_code == 200
    objects = {"a/small.txt": b"small object", "a/big.bin": os.urandom(1_500_000), "b/replaced.bin": b"first version",
               "b/deleted.txt": b"gone soon", "empty.txt": b""}
    for name, data in objects.items():
        r = httpx.post(f"{url}/storage/v1/object/keep/{name}", content=data, timeout=60,
                       headers={**headers, "Content-Type": "application/octet-stream"})
        assert r.status_code == 200, r.text
    objects["b/replaced.bin"] = b"second version, longer than the first"
    r = httpx.put(f"{url}/storage/v1/object/keep/b/replaced.bin", content=objects["b/replaced.bin"], timeout=30,
                  headers={**headers, "Content-Type": "application/octet-stream"})
    assert r.status_code == 200, r.text
    assert httpx.delete(f"{url}/storage/v1/object/keep/b/deleted.txt", headers=headers, timeout=30).status_code == 200
    del objects["b/deleted.txt"]
    return objects


def check_objects(url: str, key: str, objects: dict[str, bytes]) -> None:
    headers = {"apikey": key, "Authorization": f"Bearer {key}"}
    for name, data in objects.items():
        r = httpx.get(f"{url}/storage/v1/object/keep/{name}", headers=headers, timeout=60)
        assert r.status_code == 200 and r.content == data, (name, r.status_code, r.text[:200])
    gone = httpx.get(f"{url}/storage/v1/object/keep/b/deleted.txt", headers=headers, timeout=30)
    assert gone.status_code == 400 and gone.json()["statusCode"] == "404"


def test_backup_carries_object_bytes(apple_issuer, deployments, tmp_path):
    """Objects uploaded through /storage/v1 come back byte for byte after backup and restore into an empty
    deployment: on SQLite the storage/ folder travels in the archive (exactly the versions the rows point at, with a
    checksum line in the report); on PostgreSQL the bytes are rows of storage_object_chunks, in the dump and in the
    table checksums."""
    source = deployments("caravan-backup-objects-")
    keys = keys_of(source)
    key = keys["service_role_key"]
    backup_file = tmp_path / "objects.caravan-backup"
    with serving(source, auth_environment(apple_issuer)) as (_, url):
        objects = store_objects(url, key)
        if ENGINE == "sqlite":  # what a crash leaves: never carried
            orphan = source.data_dir / "storage" / "ab" / "ab000000-0000-4000-8000-000000000000"
            orphan.parent.mkdir(parents=True, exist_ok=True)
            orphan.write_bytes(b"orphan")
        backup = caravan("backup", *source.args, "--out", str(backup_file), "--json")
        assert backup.returncode == 0, backup.stdout + backup.stderr
    manifest = json.loads(backup.stdout)
    tables = {entry["table"]: entry for entry in manifest["tables"]}
    assert tables["storage_objects"]["rows"] == len(objects)
    if ENGINE == "sqlite":
        assert manifest["storage"]["files"] == len(objects)
        assert manifest["storage"]["bytes"] == sum(len(data) for data in objects.values())
        assert tables["storage_object_chunks"]["rows"] == 0
    else:
        assert "storage" not in manifest  # the bytes are rows: 2 chunks for the 1.5 MB object, 1 for each other
        assert tables["storage_object_chunks"]["rows"] == len(objects) + 1

    target = deployments("caravan-backup-objects-target-", empty=True)
    restored = caravan("restore", str(backup_file), *target.args, "--json")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    report = json.loads(restored.stdout)
    assert report["ok"] is True, report
    lines = {entry["table"]: entry for entry in report["tables"]}
    assert lines["storage_object_chunks"]["target_rows"] == tables["storage_object_chunks"]["rows"]
    if ENGINE == "sqlite":
        assert lines[OBJECT_BYTES]["target_rows"] == len(objects)
        assert lines[OBJECT_BYTES]["target_checksum"] == manifest["storage"]["checksum"]
        carried = sorted(p.name for p in (target.data_dir / "storage").rglob("*") if p.is_file())
        assert len(carried) == len(objects) and "ab000000-0000-4000-8000-000000000000" not in carried
    with serving(target, auth_environment(apple_issuer)) as (_, url):
        check_objects(url, key, objects)


@pytest.mark.skipif(ENGINE != "sqlite" or not CLUSTER_URL, reason="a SQLite backup into PostgreSQL: the SQLite pass, with the test cluster")
def test_sqlite_backup_with_objects_restores_into_postgres(apple_issuer, deployments, tmp_path):
    """The files of a SQLite backup become chunks in a PostgreSQL deployment, checked against the backup."""
    source = deployments("caravan-backup-objects-sqlite-", engine="sqlite")
    key = keys_of(source)["service_role_key"]
    backup_file = tmp_path / "objects-sqlite.caravan-backup"
    with serving(source, auth_environment(apple_issuer)) as (_, url):
        objects = store_objects(url, key)
    backup = caravan("backup", *source.args, "--out", str(backup_file), "--json")
    assert backup.returncode == 0, backup.stderr
    target = deployments("caravan-backup-objects-pg-", engine="postgres", empty=True)
    restored = caravan("restore", str(backup_file), *target.args, "--json")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    report = json.loads(restored.stdout)
    assert report["ok"] is True, report
    assert {entry["table"]: entry for entry in report["tables"]}[OBJECT_BYTES]["target_rows"] == len(objects)
    with serving(target, auth_environment(apple_issuer)) as (_, url):
        check_objects(url, key, objects)


def test_backup_while_objects_are_uploaded(apple_issuer, deployments, tmp_path):
    """A backup taken while objects are being uploaded restores a consistent point in time: every object row it holds
    downloads completely (size and ETag as the row says), and uploads answered after it began are not in it."""
    import hashlib

    source = deployments("caravan-backup-uploads-")
    key = keys_of(source)["service_role_key"]
    headers = {"apikey": key, "Authorization": f"Bearer {key}"}
    backup_file = tmp_path / "uploads.caravan-backup"
    with serving(source, auth_environment(apple_issuer)) as (_, url):
        assert httpx.post(f"{url}/storage/v1/bucket", json={"id": "load", "name": "load"}, headers=headers, timeout=30).status_code == 200
        stop = threading.Event()
        uploaded: list[int] = []
        failures: list[str] = []

        def upload() -> None:
            with httpx.Client(timeout=30) as client:
                n = 0
                while not stop.is_set():
                    data = os.urandom(1000 + (n * 7919) % 300_000)
                    r = client.post(f"{url}/storage/v1/object/load/f/{n}.bin", content=data,
                                    headers={**headers, "Content-Type": "application/octet-stream"})
                    (uploaded.append(n) if r.status_code == 200 else failures.append(f"{r.status_code} {r.text[:200]}"))
                    n += 1

        uploader = threading.Thread(target=upload, daemon=True)
        uploader.start()
        try:
            while len(uploaded) < 5 and not failures:
                threading.Event().wait(0.05)
            before = len(uploaded)
            backup = caravan("backup", *source.args, "--out", str(backup_file), "--json")
            during = len(uploaded) - before
        finally:
            stop.set()
            uploader.join(timeout=60)
    assert backup.returncode == 0, backup.stdout + backup.stderr
    assert not failures, failures[:3]
    manifest = json.loads(backup.stdout)
    rows = {entry["table"]: entry for entry in manifest["tables"]}["storage_objects"]["rows"]
    assert during > 0 and before <= rows < len(uploaded), (before, rows, len(uploaded))
    if ENGINE == "sqlite":
        assert manifest["storage"]["files"] == rows

    target = deployments("caravan-backup-uploads-target-", empty=True)
    restored = caravan("restore", str(backup_file), *target.args, "--json")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert json.loads(restored.stdout)["ok"] is True
    with serving(target, auth_environment(apple_issuer)) as (_, url):
        listed = httpx.post(f"{url}/storage/v1/object/list/load", json={"prefix": "f", "limit": 100000}, headers=headers, timeout=60).json()
        assert len(listed) == rows
        for entry in listed:
            data = httpx.get(f"{url}/storage/v1/object/load/f/{entry['name']}", headers=headers, timeout=60).content
            assert len(data) == entry["metadata"]["size"]
            assert '"' + hashlib.md5(data).hexdigest() + '"' == entry["metadata"]["eTag"]

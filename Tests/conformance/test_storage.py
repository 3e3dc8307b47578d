"""Storage through the official client: storage3 in supabase-py against a real `caravan serve`, on
the engine of CARAVAN_TEST_ENGINE (bytes in the data directory on SQLite, in the database on PostgreSQL).

Each module gets its own deployment without the places data, so the PostgreSQL run starts in seconds."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from dataclasses import dataclass

import httpx
import pytest
from storage3.exceptions import StorageApiError
from supabase import Client, create_client

from conftest import _run, auth_environment, serving
from deployments import Deployment, new_deployment

PASSWORD = "conformance-pass-7"
JPEG = bytes([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10]) + b"JFIF\x00" + bytes(range(256)) * 4 + bytes([0xFF, 0xD9])


@dataclass
class StorageServer:
    url: str
    anon_key: str
    service_role_key: str
    deployment: Deployment


@pytest.fixture(scope="module")
def storage_server(apple_issuer):
    deployment = new_deployment("caravan-storage-")
    try:
        keys_run = _run("keys", *deployment.args, "--json")
        assert keys_run.returncode == 0, keys_run.stderr
        keys = json.loads(keys_run.stdout)
        with serving(deployment, auth_environment(apple_issuer)) as (_, url):
            yield StorageServer(url, keys["anon_key"], keys["service_role_key"], deployment)
    finally:
        deployment.remove()


@pytest.fixture(scope="module")
def service(storage_server) -> Client:
    return create_client(storage_server.url, storage_server.service_role_key)


def _user(server: StorageServer, name: str) -> tuple[Client, str]:
    client = create_client(server.url, server.anon_key)
    response = client.auth.sign_up({"email": f"st-{name}-{uuid.uuid4().hex[:8]}@example.com", "password": PASSWORD})
    assert response.session is not None and response.user is not None
    return client, response.user.id


@pytest.fixture(scope="module")
def alice(storage_server) -> tuple[Client, str]:
    return _user(storage_server, "alice")


@pytest.fixture(scope="module")
def bob(storage_server) -> tuple[Client, str]:
    return _user(storage_server, "bob")


@pytest.fixture(scope="module")
def private_bucket(service) -> str:
    name = f"private-{uuid.uuid4().hex[:8]}"
    assert service.storage.create_bucket(name) == {"name": name}
    return name


@pytest.fixture(scope="module")
def public_bucket(service) -> str:
    name = f"public-{uuid.uuid4().hex[:8]}"
    service.storage.create_bucket(name, options={"public": True})
    return name


def _error(call) -> StorageApiError:
    with pytest.raises(StorageApiError) as caught:
        call()
    return caught.value


def test_bucket_lifecycle(service):
    name = f"life-{uuid.uuid4().hex[:8]}"
    service.storage.create_bucket(name, options={"public": False, "file_size_limit": 1024, "allowed_mime_types": ["text/plain"]})
    bucket = service.storage.get_bucket(name)
    assert (bucket.id, bucket.name, bucket.public, bucket.file_size_limit, bucket.allowed_mime_types) == (name, name, False, 1024, ["text/plain"])
    assert name in [b.id for b in service.storage.list_buckets()]
    assert _error(lambda: service.storage.create_bucket(name)).status == "409"
    service.storage.update_bucket(name, {"public": True, "file_size_limit": 2048, "allowed_mime_types": ["text/*"]})
    bucket = service.storage.get_bucket(name)
    assert (bucket.public, bucket.file_size_limit, bucket.allowed_mime_types) == (True, 2048, ["text/*"])
    service.storage.from_(name).upload("a.txt", b"hello")
    assert _error(lambda: service.storage.delete_bucket(name)).status == "409"  # not empty
    assert service.storage.empty_bucket(name) == {"message": "Successfully emptied"}
    assert service.storage.from_(name).list() == []
    assert service.storage.delete_bucket(name) == {"message": "Successfully deleted"}
    missing = _error(lambda: service.storage.get_bucket(name))
    assert (missing.status, missing.code) == ("404", "Bucket not found")


def test_users_do_not_manage_buckets(alice):
    client, _ = alice
    assert _error(lambda: client.storage.create_bucket(f"mine-{uuid.uuid4().hex[:8]}")).status == "403"
    assert client.storage.list_buckets() == []


def test_upload_download_list_and_info(alice, private_bucket):
    client, alice_id = alice
    files = client.storage.from_(private_bucket)
    contents = {"notes/a.txt": b"alpha", "notes/b.txt": b"bravo bravo", "notes/sub/c.txt": b"charlie", "top.txt": "مرحبا".encode()}
    for path, data in contents.items():
        uploaded = files.upload(path, data, {"content-type": "text/plain"})
        assert uploaded.full_path == f"{private_bucket}/{path}"
    for path, data in contents.items():
        assert files.download(path) == data
    listed = files.list("notes")
    assert sorted(entry["name"] for entry in listed) == ["a.txt", "b.txt", "sub"]
    folder = next(entry for entry in listed if entry["name"] == "sub")
    assert folder["id"] is None and folder["metadata"] is None
    a = next(entry for entry in listed if entry["name"] == "a.txt")
    assert a["metadata"]["size"] == 5 and a["metadata"]["mimetype"] == "text/plain"
    assert a["metadata"]["eTag"] == '"' + hashlib.md5(b"alpha").hexdigest() + '"'
    assert [e["name"] for e in files.list("notes", {"limit": 1, "offset": 1, "sortBy": {"column": "name", "order": "asc"}})] == ["b.txt"]
    assert [e["name"] for e in files.list("notes", {"sortBy": {"column": "name", "order": "desc"}})] == ["sub", "b.txt", "a.txt"]
    assert [e["name"] for e in files.list("notes", {"search": "b"})] == ["b.txt"]
    assert sorted(e["name"] for e in files.list()) == ["notes", "top.txt"]
    info = files.info("notes/b.txt")
    assert info["size"] == len(b"bravo bravo") and info["content_type"] == "text/plain" and info["owner"] == alice_id
    assert info["etag"] == '"' + hashlib.md5(b"bravo bravo").hexdigest() + '"'
    assert files.exists("notes/b.txt") and not files.exists("notes/zzz.txt")
    missing = _error(lambda: files.download("notes/zzz.txt"))
    assert (missing.status, missing.code) == ("404", "not_found")


def test_object_changes_reach_the_change_log(storage_server, alice, private_bucket):
    client, _ = alice
    client.storage.from_(private_bucket).upload("logged.txt", b"in the log")
    row = storage_server.deployment.fetch_one(
        "SELECT count(*) FROM caravan_changes WHERE table_name = ? AND CAST(record AS TEXT) LIKE ?", ("storage_objects", '%logged.txt%'))
    assert row is not None and row[0] >= 1


def test_move_copy_and_remove(alice, private_bucket):
    client, _ = alice
    files = client.storage.from_(private_bucket)
    files.upload("mc/original.txt", b"original bytes")
    assert files.move("mc/original.txt", "mc/moved.txt") == {"message": "Successfully moved"}
    assert not files.exists("mc/original.txt")
    assert files.download("mc/moved.txt") == b"original bytes"
    copied = files.copy("mc/moved.txt", "mc/copy.txt")
    assert copied["Key"] == f"{private_bucket}/mc/copy.txt"
    assert files.download("mc/copy.txt") == b"original bytes"
    files.upload("mc/other.txt", b"other")
    assert _error(lambda: files.move("mc/other.txt", "mc/copy.txt")).status == "409"  # the destination exists
    removed = files.remove(["mc/moved.txt", "mc/copy.txt", "mc/never-was.txt"])
    assert sorted(r["name"] for r in removed) == ["mc/copy.txt", "mc/moved.txt"]
    assert [e["name"] for e in files.list("mc")] == ["other.txt"]


def test_upsert_semantics(alice, private_bucket):
    client, _ = alice
    files = client.storage.from_(private_bucket)
    files.upload("up/file.txt", b"first")
    duplicate = _error(lambda: files.upload("up/file.txt", b"second"))
    assert (duplicate.status, duplicate.code) == ("409", "Duplicate")
    assert files.download("up/file.txt") == b"first"
    files.upload("up/file.txt", b"second", {"upsert": "true"})
    assert files.download("up/file.txt") == b"second"
    files.update("up/file.txt", b"third, via PUT")
    assert files.download("up/file.txt") == b"third, via PUT"
    assert files.info("up/file.txt")["size"] == len(b"third, via PUT")
    files.update("up/new-by-put.txt", b"put creates too")
    assert files.download("up/new-by-put.txt") == b"put creates too"


def test_concurrent_upserts_of_one_new_name_all_succeed_and_leave_one_object(storage_server, alice, private_bucket):
    """Writes of one object name run one after the other (on PostgreSQL they would otherwise race: two see no row,
    both insert, one fails): every upsert succeeds, one row remains, and it holds one upload's whole bytes."""
    from concurrent.futures import ThreadPoolExecutor

    client, _ = alice
    token = client.auth.get_session().access_token
    path = f"race/{uuid.uuid4().hex}.txt"
    bodies = [f"upload {i} ".encode() * (100 + i) for i in range(8)]

    def upload(body: bytes) -> int:
        with httpx.Client(base_url=storage_server.url, timeout=30) as http:
            return http.post(f"/storage/v1/object/{private_bucket}/{path}", content=body,
                             headers={"apikey": storage_server.anon_key, "Authorization": f"Bearer {token}",
                                      "x-upsert": "true", "content-type": "text/plain"}).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(upload, bodies))
    assert statuses == [200] * 8
    row = storage_server.deployment.fetch_one("SELECT count(*) FROM storage_objects WHERE bucket_id = ? AND name = ?", (private_bucket, path))
    assert row is not None and row[0] == 1
    assert client.storage.from_(private_bucket).download(path) in bodies


def test_another_users_private_object_is_refused_and_not_listed(storage_server, alice, bob, private_bucket):
    (alice_client, _), (bob_client, _) = alice, bob
    alice_client.storage.from_(private_bucket).upload("secret/diary.txt", b"dear diary")
    theirs = bob_client.storage.from_(private_bucket)
    refused = _error(lambda: theirs.download("secret/diary.txt"))
    assert (refused.status, refused.code) == ("404", "not_found")
    assert theirs.list("secret") == []
    assert all(e["name"] != "secret" for e in theirs.list())
    assert _error(lambda: theirs.info("secret/diary.txt")).status == "404"
    assert _error(lambda: theirs.create_signed_url("secret/diary.txt", 60)).status == "404"
    assert theirs.remove(["secret/diary.txt"]) == []
    overwrite = _error(lambda: theirs.upload("secret/diary.txt", b"bob was here", {"upsert": "true"}))
    assert overwrite.status == "403"
    assert _error(lambda: theirs.move("secret/diary.txt", "secret/bobs.txt")).status == "404"
    assert alice_client.storage.from_(private_bucket).download("secret/diary.txt") == b"dear diary"
    anon = create_client(storage_server.url, storage_server.anon_key)
    assert _error(lambda: anon.storage.from_(private_bucket).download("secret/diary.txt")).status == "404"


def test_signed_urls(storage_server, alice, private_bucket):
    client, _ = alice
    files = client.storage.from_(private_bucket)
    files.upload("signed/photo.txt", b"signed bytes")
    url = files.create_signed_url("signed/photo.txt", 60)["signedURL"]
    fetched = httpx.get(url)  # no key: the token is the credential
    assert fetched.status_code == 200 and fetched.content == b"signed bytes"
    head, token = url.split("?token=")
    tampered = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    refused = httpx.get(f"{head}?token={tampered}")
    assert refused.status_code == 400
    assert refused.json()["statusCode"] == "400" and refused.json()["error"] == "InvalidSignature"
    # A token for one object opens no other.
    files.upload("signed/other.txt", b"other")
    other = httpx.get(head.replace("photo.txt", "other.txt") + f"?token={token}")
    assert other.status_code == 400 and other.json()["error"] == "InvalidSignature"
    # A token signed with another secret is refused.
    forged = _jwt({"url": f"{private_bucket}/signed/photo.txt", "iat": int(time.time()), "exp": int(time.time()) + 60}, b"x" * 48)
    assert httpx.get(f"{head}?token={forged}").json()["error"] == "InvalidSignature"
    short = files.create_signed_url("signed/photo.txt", 1)["signedURL"]
    time.sleep(2.2)
    expired = httpx.get(short)
    assert expired.status_code == 400 and expired.json() == {"statusCode": "400", "code": "InvalidJWT", "error": "InvalidJWT", "message": "jwt expired"}
    many = files.create_signed_urls(["signed/photo.txt", "signed/none.txt"], 60)
    assert many[0]["error"] is None and httpx.get(many[0]["signedURL"]).content == b"signed bytes"
    assert many[1]["signedURL"] is None and many[1]["error"]


def _jwt(claims: dict, secret: bytes) -> str:
    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    signing_input = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + b64(json.dumps(claims).encode())
    return signing_input + "." + b64(hmac.new(secret, signing_input.encode(), hashlib.sha256).digest())


def test_public_urls(alice, public_bucket, private_bucket):
    client, _ = alice
    client.storage.from_(public_bucket).upload("pics/open.txt", b"for everyone")
    url = client.storage.from_(public_bucket).get_public_url("pics/open.txt")
    fetched = httpx.get(url)
    assert fetched.status_code == 200 and fetched.content == b"for everyone"
    assert fetched.headers["etag"] == '"' + hashlib.md5(b"for everyone").hexdigest() + '"'
    client.storage.from_(private_bucket).upload("pics/closed.txt", b"not for everyone")
    closed = httpx.get(client.storage.from_(private_bucket).get_public_url("pics/closed.txt"))
    assert closed.status_code == 400 and closed.json()["statusCode"] == "404"


def test_avatars_take_jpeg_only_up_to_5_mb(storage_server, alice):
    client, alice_id = alice
    avatars = client.storage.from_("avatars")
    assert avatars.upload(f"{alice_id}/me.jpg", JPEG, {"content-type": "image/jpeg"}).full_path == f"avatars/{alice_id}/me.jpg"
    assert avatars.download(f"{alice_id}/me.jpg") == JPEG
    assert avatars.info(f"{alice_id}/me.jpg")["content_type"] == "image/jpeg"
    not_jpeg = _error(lambda: avatars.upload(f"{alice_id}/fake.jpg", b"this is text, not a JPEG", {"content-type": "image/jpeg"}))
    assert (not_jpeg.status, not_jpeg.code) == ("415", "invalid_mime_type")
    assert "text/plain" in not_jpeg.message
    png = _error(lambda: avatars.upload(f"{alice_id}/fake.jpg", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, {"content-type": "image/jpeg"}))
    assert png.code == "invalid_mime_type"
    oversized = JPEG + b"\x00" * (5 * 1024 * 1024 - len(JPEG) + 1)
    too_big = _error(lambda: avatars.upload(f"{alice_id}/big.jpg", oversized, {"content-type": "image/jpeg"}))
    assert (too_big.status, too_big.code, too_big.message) == ("413", "Payload too large", "The object exceeded the maximum allowed size")
    # A refusal loses nothing: the stored avatar is untouched, and nothing was stored for the refused uploads.
    assert _error(lambda: avatars.upload(f"{alice_id}/me.jpg", b"text again", {"content-type": "image/jpeg", "upsert": "true"})).status == "415"
    assert avatars.download(f"{alice_id}/me.jpg") == JPEG
    assert not avatars.exists(f"{alice_id}/fake.jpg") and not avatars.exists(f"{alice_id}/big.jpg")
    # The exact wire shape of a refusal.
    raw = httpx.post(f"{storage_server.url}/storage/v1/object/avatars/{alice_id}/raw.jpg", content=b"plain",
                     headers={"apikey": storage_server.anon_key, "Authorization": client.options.headers["Authorization"], "Content-Type": "image/jpeg"})
    assert raw.status_code == 400
    assert raw.json() == {"statusCode": "415", "code": "InvalidMimeType", "error": "invalid_mime_type", "message": "mime type text/plain is not supported"}


def test_avatar_paths_belong_to_their_owner(storage_server, alice, bob, service):
    """`avatars` declares `<user_id>/…` paths: nobody takes another user's path first, by upload, move or copy."""
    alice_client, alice_id = alice
    bob_client, bob_id = bob
    squat = _error(lambda: alice_client.storage.from_("avatars").upload(f"{bob_id}/me.jpg", JPEG, {"content-type": "image/jpeg"}))
    assert (squat.status, squat.code) == ("403", "Unauthorized"), squat
    for name in ["loose.jpg", f"{alice_id}x/me.jpg"]:
        assert _error(lambda: alice_client.storage.from_("avatars").upload(name, JPEG, {"content-type": "image/jpeg"})).status in ("403", "400")
    alice_client.storage.from_("avatars").upload(f"{alice_id}/own.jpg", JPEG, {"content-type": "image/jpeg", "upsert": "true"})
    assert _error(lambda: alice_client.storage.from_("avatars").move(f"{alice_id}/own.jpg", f"{bob_id}/own.jpg")).status == "403"
    assert _error(lambda: alice_client.storage.from_("avatars").copy(f"{alice_id}/own.jpg", f"{bob_id}/copy.jpg")).status == "403"
    # Bob's own path is still his to take, and the public URL serves his file.
    bob_client.storage.from_("avatars").upload(f"{bob_id}/me.jpg", JPEG, {"content-type": "image/jpeg", "upsert": "true"})
    assert httpx.get(bob_client.storage.from_("avatars").get_public_url(f"{bob_id}/me.jpg")).content == JPEG
    # The service role writes anywhere.
    service.storage.from_("avatars").upload("shared/default.jpg", JPEG, {"content-type": "image/jpeg", "upsert": "true"})
    # Listing is untouched: each user's folder at the top, their files inside it, nothing of the refused writes.
    top = {entry["name"] for entry in alice_client.storage.from_("avatars").list()}
    assert {alice_id, bob_id, "shared"} <= top, top
    assert "own.jpg" in {entry["name"] for entry in alice_client.storage.from_("avatars").list(alice_id)}
    assert {entry["name"] for entry in alice_client.storage.from_("avatars").list(bob_id)} == {"me.jpg"}


@pytest.mark.parametrize("name,content_type,body", [
    ("page.html", "text/html", b"<html><script>alert(document.domain)</script></html>"),
    ("logo.svg", "image/svg+xml", b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
    ("feed.xml", "application/xml", b'<?xml version="1.0"?><a/>'),
    ("app.js", "text/javascript", b"alert(1)"),
])
def test_active_content_is_served_as_a_sandboxed_attachment(alice, public_bucket, name, content_type, body):
    client, alice_id = alice
    client.storage.from_(public_bucket).upload(f"{alice_id}/{name}", body, {"content-type": content_type, "upsert": "true"})
    url = client.storage.from_(public_bucket).get_public_url(f"{alice_id}/{name}")
    for fetched in [httpx.get(url), httpx.get(client.storage.from_(public_bucket).create_signed_url(f"{alice_id}/{name}", 60)["signedURL"])]:
        assert fetched.status_code == 200 and fetched.content == body
        assert fetched.headers["x-content-type-options"] == "nosniff"
        assert fetched.headers["content-disposition"].startswith("attachment"), fetched.headers
        assert "sandbox" in fetched.headers["content-security-policy"]


def test_passive_content_stays_inline_and_unsniffed(storage_server, alice, public_bucket):
    client, alice_id = alice
    client.storage.from_(public_bucket).upload(f"{alice_id}/note.txt", b"<script>alert(1)</script>", {"content-type": "text/plain", "upsert": "true"})
    fetched = httpx.get(client.storage.from_(public_bucket).get_public_url(f"{alice_id}/note.txt"))
    assert fetched.headers["x-content-type-options"] == "nosniff"
    assert "content-disposition" not in fetched.headers
    assert "sandbox" in fetched.headers["content-security-policy"]
    # Every other response of the API too.
    assert httpx.get(f"{storage_server.url}/health").headers["x-content-type-options"] == "nosniff"
    refused = httpx.get(f"{storage_server.url}/storage/v1/bucket")
    assert refused.headers["x-content-type-options"] == "nosniff"


def test_sigkill_during_uploads_never_serves_a_partial_object(apple_issuer):
    """SIGKILL while 200 uploads are in flight, restart: every listed object downloads completely, with the size and
    ETag its row records, and every upload answered 200 before the kill is there."""
    import os
    import signal
    import threading

    from conftest import _start

    deployment = new_deployment("caravan-storage-kill-")
    try:
        keys = json.loads(_run("keys", *deployment.args, "--json").stdout)
        key = keys["service_role_key"]
        headers = {"apikey": key, "Authorization": f"Bearer {key}"}
        proc, port = _start(deployment, deployment.data_dir / "serve.log", auth_environment(apple_issuer))
        url = f"http://127.0.0.1:{port}"
        create_client(url, key).storage.create_bucket("crash")
        confirmed: list[str] = []
        lock = threading.Lock()

        def upload(i: int) -> None:
            data = os.urandom(10_000 + (i * 7919) % 1_500_000)
            try:
                r = httpx.post(f"{url}/storage/v1/object/crash/f/{i}.bin", content=data,
                               headers={**headers, "Content-Type": "application/octet-stream"}, timeout=30)
                if r.status_code == 200:
                    with lock:
                        confirmed.append(f"{i}.bin")
            except httpx.HTTPError:
                pass  # the server died mid-request

        threads = [threading.Thread(target=upload, args=(i,)) for i in range(200)]
        for t in threads:
            t.start()
        time.sleep(0.8)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        for t in threads:
            t.join(timeout=60)
        with lock:
            answered = list(confirmed)
        with serving(deployment, auth_environment(apple_issuer), log_name="serve-after-kill.log") as (_, url):
            files = create_client(url, key).storage.from_("crash")
            listed = files.list("f", {"limit": 1000})
            names = {entry["name"] for entry in listed}
            assert set(answered) <= names, "an upload answered 200 was lost"
            for entry in listed:
                data = files.download(f"f/{entry['name']}")
                assert len(data) == entry["metadata"]["size"]
                assert '"' + hashlib.md5(data).hexdigest() + '"' == entry["metadata"]["eTag"]
    finally:
        deployment.remove()


def test_range_requests(storage_server, alice, public_bucket):
    """`Range: bytes=…` on every download route: 206 with Content-Range for a-b, a- and -n; 416 with
    `Content-Range: bytes */size` past the end; the whole object (200) for what is not one byte range; and
    `Accept-Ranges: bytes` on every answer."""
    client, alice_id = alice
    data = bytes(range(256)) * 8  # 2048 bytes
    name = f"{alice_id}/ranges.bin"
    files = client.storage.from_(public_bucket)
    files.upload(name, data, {"content-type": "application/octet-stream"})
    auth = {"apikey": storage_server.anon_key, "Authorization": client.options.headers["Authorization"]}
    base = f"{storage_server.url}/storage/v1/object"
    routes = [
        (f"{base}/{public_bucket}/{name}", auth),
        (f"{base}/authenticated/{public_bucket}/{name}", auth),
        (f"{base}/public/{public_bucket}/{name}", {}),
        (files.create_signed_url(name, 600)["signedURL"], {}),
    ]
    etag = '"' + hashlib.md5(data).hexdigest() + '"'
    for url, headers in routes:
        whole = httpx.get(url, headers=headers, timeout=30)
        assert whole.status_code == 200 and whole.content == data and whole.headers["accept-ranges"] == "bytes", url
        for spec, (first, last) in {"bytes=0-99": (0, 99), "bytes=100-": (100, 2047), "bytes=-10": (2038, 2047),
                                    "bytes=2000-5000": (2000, 2047), "bytes=-5000": (0, 2047), "bytes=7-7": (7, 7)}.items():
            r = httpx.get(url, headers={**headers, "Range": spec}, timeout=30)
            assert r.status_code == 206, (url, spec, r.status_code, r.text[:200])
            assert r.headers["content-range"] == f"bytes {first}-{last}/2048", spec
            assert r.content == data[first:last + 1] and int(r.headers["content-length"]) == last - first + 1, spec
            assert r.headers["accept-ranges"] == "bytes" and r.headers["etag"] == etag
        for spec in ["bytes=2048-", "bytes=5000-6000", "bytes=-0"]:
            r = httpx.get(url, headers={**headers, "Range": spec}, timeout=30)
            assert r.status_code == 416, (url, spec, r.status_code)
            assert r.headers["content-range"] == "bytes */2048"
            assert r.json() == {"statusCode": "416", "code": "InvalidRange", "error": "InvalidRange",
                                "message": "The requested range is not satisfiable"}
        for spec in ["bytes=5-2", "bytes=0-1,5-6", "items=0-1", "bytes=abc"]:  # not one valid byte range: ignored
            r = httpx.get(url, headers={**headers, "Range": spec}, timeout=30)
            assert r.status_code == 200 and r.content == data, (url, spec)
        # If-Range: the range only while the ETag still matches.
        assert httpx.get(url, headers={**headers, "Range": "bytes=0-9", "If-Range": etag}, timeout=30).status_code == 206
        stale = httpx.get(url, headers={**headers, "Range": "bytes=0-9", "If-Range": '"stale"'}, timeout=30)
        assert stale.status_code == 200 and stale.content == data
        head = httpx.head(url, headers={**headers, "Range": "bytes=10-19"}, timeout=30)
        assert head.status_code == 206 and head.headers["content-range"] == "bytes 10-19/2048" and head.content == b""
    empty = f"{alice_id}/empty.bin"
    files.upload(empty, b"", {"content-type": "application/octet-stream"})
    r = httpx.get(f"{base}/public/{public_bucket}/{empty}", headers={"Range": "bytes=0-"}, timeout=30)
    assert r.status_code == 416 and r.headers["content-range"] == "bytes */0"


def test_signed_upload_urls(storage_server, alice, bob, private_bucket):
    """storage3's create_signed_upload_url / upload_to_signed_url: the signer must be allowed to write the object;
    whoever holds the token uploads exactly that object (no key needed), owned by the signer."""
    from storage3.types import CreateSignedUploadUrlOptions

    (client, alice_id), (bob_client, _) = alice, bob
    files = client.storage.from_(private_bucket)
    path = f"{alice_id}/signed-upload/report.txt"
    signed = files.create_signed_upload_url(path)
    assert signed["path"] == path and signed["token"]
    assert signed["signed_url"].startswith(f"{storage_server.url}/storage/v1/object/upload/sign/{private_bucket}/{alice_id}/signed-upload/report.txt?token=")
    # Anyone with the token: a client holding only the anon key.
    stranger = create_client(storage_server.url, storage_server.anon_key).storage.from_(private_bucket)
    uploaded = stranger.upload_to_signed_url(path, signed["token"], b"uploaded through a signed URL", {"content-type": "text/plain"})
    assert uploaded.full_path == f"{private_bucket}/{path}"
    assert files.download(path) == b"uploaded through a signed URL"
    assert files.info(path)["owner"] == alice_id  # the signer owns it, so it stays private to alice
    assert _error(lambda: bob_client.storage.from_(private_bucket).download(path)).status == "404"
    # Without upsert, the same token cannot replace what it uploaded; with upsert it can.
    assert _error(lambda: stranger.upload_to_signed_url(path, signed["token"], b"again")).status == "409"
    assert _error(lambda: files.create_signed_upload_url(path)).status == "409"  # the object exists now
    replace = files.create_signed_upload_url(path, CreateSignedUploadUrlOptions(upsert="true"))
    stranger.upload_to_signed_url(path, replace["token"], b"second version", {"content-type": "text/plain"})
    assert files.download(path) == b"second version"
    # One token, one object.
    other = _error(lambda: stranger.upload_to_signed_url(f"{alice_id}/signed-upload/other.txt", replace["token"], b"x"))
    assert (other.status, other.code) == ("400", "InvalidSignature")
    # Upload tokens and download tokens do not stand in for each other.
    download_token = files.create_signed_url(path, 60)["signedURL"].split("?token=")[1]
    swapped = _error(lambda: stranger.upload_to_signed_url(path, download_token, b"x"))
    assert (swapped.status, swapped.code) == ("400", "InvalidSignature")
    as_download = httpx.get(f"{storage_server.url}/storage/v1/object/sign/{private_bucket}/{path}?token={replace['token']}", timeout=30)
    assert as_download.status_code == 400 and as_download.json()["error"] == "InvalidSignature"
    forged = _jwt({"url": f"{private_bucket}/{path}", "purpose": "upload", "upsert": True, "owner": alice_id,
                   "iat": int(time.time()), "exp": int(time.time()) + 60}, b"x" * 48)
    assert _error(lambda: stranger.upload_to_signed_url(path, forged, b"forged")).code == "InvalidSignature"
    assert files.download(path) == b"second version"
    # The signer's policies decide at signing: bob may not sign into alice's object, nor may the anon key sign at all.
    assert _error(lambda: bob_client.storage.from_(private_bucket).create_signed_upload_url(path, CreateSignedUploadUrlOptions(upsert="true"))).status == "403"
    assert _error(lambda: stranger.create_signed_upload_url(f"{alice_id}/signed-upload/anon.txt")).status == "403"
    # The token is the only credential needed: a raw PUT without any key.
    keyless = httpx.put(replace["signed_url"], content=b"no key at all", headers={"Content-Type": "text/plain"}, timeout=30)
    assert keyless.status_code == 200 and keyless.json()["Key"] == f"{private_bucket}/{path}", keyless.text
    assert files.download(path) == b"no key at all"
    # No token: refused.
    missing = httpx.put(f"{storage_server.url}/storage/v1/object/upload/sign/{private_bucket}/{path}", content=b"x", timeout=30)
    assert missing.status_code == 400 and missing.json()["error"] == "InvalidRequest"


def test_orphaned_bytes_are_removed_at_start(apple_issuer):
    """SQLite deployments: files under storage/ that no storage_objects row points at (a crash between the rename
    and the commit) and temporary files of interrupted writes are removed when `caravan serve` starts, and the log
    says how many; objects and files that are not Caravan's stay."""
    from deployments import ENGINE

    if ENGINE != "sqlite":
        pytest.skip("object bytes are files only on SQLite deployments")
    deployment = new_deployment("caravan-storage-orphans-")
    try:
        key = json.loads(_run("keys", *deployment.args, "--json").stdout)["service_role_key"]
        with serving(deployment, auth_environment(apple_issuer)) as (_, url):
            service = create_client(url, key).storage
            service.create_bucket("kept")
            service.from_("kept").upload("object.txt", b"still here")
        storage = deployment.data_dir / "storage"
        kept = sorted(p for p in storage.rglob("*") if p.is_file())
        assert len(kept) == 1
        orphans = [storage / "0a" / "0a000000-0000-4000-8000-000000000001", storage / "0b" / "0b000000-0000-4000-8000-000000000002"]
        temporary = storage / "0c" / ".tmp-0c000000-0000-4000-8000-000000000003"
        foreign = storage / "0a" / "README"
        for path in orphans + [temporary, foreign]:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"left by a crash")
        with serving(deployment, auth_environment(apple_issuer), log_name="serve-orphans.log") as (_, url):
            assert create_client(url, key).storage.from_("kept").download("object.txt") == b"still here"
        assert sorted(p for p in storage.rglob("*") if p.is_file()) == sorted(kept + [foreign])
        log = (deployment.data_dir / "serve-orphans.log").read_text()
        assert "storage orphans removed" in log and "storage.orphans=2" in log and "storage.temporary_files=1" in log, log[-2000:]
    finally:
        deployment.remove()

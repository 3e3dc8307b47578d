"""Storage image transformations through the official client (storage3 in supabase-py): public URLs, signed URLs and
downloads with a `transform`, served by `caravan serve` through libvips on the engine of CARAVAN_TEST_ENGINE. Output
sizes and formats are read with Pillow, not through libvips.

Without libvips the server answers 501 FeatureNotEnabled and these tests skip — unless CARAVAN_REQUIRE_VIPS=1
(scripts/test sets it; .ci/run installs libvips42), when they fail instead. The server without libvips (forced here with
CARAVAN_VIPS_LIBRARY naming a missing file) is tested whatever the machine has."""
from __future__ import annotations

import io
import json
import os
import uuid
from dataclasses import dataclass

import httpx
import pytest
from PIL import Image
from storage3.exceptions import StorageApiError
from supabase import Client, create_client

from conftest import _run, auth_environment, serving
from deployments import Deployment, new_deployment

PASSWORD = "conformance-pass-7"


@dataclass
class ImageServer:
    url: str
    anon_key: str
    service_role_key: str
    deployment: Deployment


def _server(apple_issuer, prefix: str, **env: str):
    deployment = new_deployment(prefix)
    try:
        keys_run = _run("keys", *deployment.args, "--json")
        assert keys_run.returncode == 0, keys_run.stderr
        keys = json.loads(keys_run.stdout)
        with serving(deployment, auth_environment(apple_issuer, **env)) as (_, url):
            yield ImageServer(url, keys["anon_key"], keys["service_role_key"], deployment)
    finally:
        deployment.remove()


@pytest.fixture(scope="module")
def image_server(apple_issuer):
    yield from _server(apple_issuer, "caravan-images-")


def _picture(width: int, height: int, kind: str, quality: int = 95) -> bytes:
    image = Image.new("RGB", (width, height))
    image.putdata([(x * 255 // width, y * 255 // height, (x * y) % 256) for y in range(height) for x in range(width)])
    out = io.BytesIO()
    image.save(out, format=kind, quality=quality)
    return out.getvalue()


@pytest.fixture(scope="module")
def service(image_server) -> Client:
    client = create_client(image_server.url, image_server.service_role_key)
    probe = httpx.get(f"{image_server.url}/storage/v1/render/image/public/none/none.png", headers={"apikey": image_server.anon_key})
    if probe.status_code == 501:
        reason = "libvips is not installed, so `caravan serve` has image transformations off"
        if os.environ.get("CARAVAN_REQUIRE_VIPS") == "1":
            pytest.fail(reason + "; this run requires libvips (CARAVAN_REQUIRE_VIPS=1; install the Debian package libvips42)")
        pytest.skip(reason + " (SKIPPED; CARAVAN_REQUIRE_VIPS=1 makes this a failure)")
    return client


@pytest.fixture(scope="module")
def buckets(service) -> tuple[str, str]:
    public, private = f"pics-{uuid.uuid4().hex[:8]}", f"vault-{uuid.uuid4().hex[:8]}"
    service.storage.create_bucket(public, options={"public": True})
    service.storage.create_bucket(private)
    return public, private


def _user(server: ImageServer, name: str) -> tuple[Client, str]:
    client = create_client(server.url, server.anon_key)
    response = client.auth.sign_up({"email": f"img-{name}-{uuid.uuid4().hex[:8]}@example.com", "password": PASSWORD})
    assert response.session is not None and response.user is not None
    return client, response.user.id


def _open(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data))


def test_public_url_with_transform(image_server, service, buckets):
    public, _ = buckets
    files = service.storage.from_(public)
    files.upload("wide.png", _picture(300, 200, "PNG"), {"content-type": "image/png", "cache-control": "120"})
    cases = [
        ({"width": 100, "height": 100}, (100, 100)),  # cover, the default
        ({"width": 100, "height": 100, "resize": "cover"}, (100, 100)),
        ({"width": 100, "height": 100, "resize": "contain"}, (100, 67)),
        ({"width": 120, "height": 30, "resize": "fill"}, (120, 30)),
        ({"width": 150}, (150, 100)),
        ({"height": 2400}, (300, 200)),  # never enlarged
    ]
    for transform, size in cases:
        url = files.get_public_url("wide.png", {"transform": transform})
        assert "/storage/v1/render/image/public/" in url, url
        response = httpx.get(url)  # no key: a public bucket's object
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "image/png"
        picture = _open(response.content)
        assert (picture.format, picture.size) == ("PNG", size), transform
    # Cache-Control as the download's, the sandbox as every object's.
    plain = httpx.get(files.get_public_url("wide.png"))
    rendered = httpx.get(files.get_public_url("wide.png", {"transform": {"width": 10}}))
    assert rendered.headers["cache-control"] == plain.headers["cache-control"] == "max-age=120"
    assert rendered.headers["content-security-policy"] == plain.headers["content-security-policy"]

    webp = httpx.get(files.get_public_url("wide.png", {"transform": {"width": 60, "height": 60, "format": "webp"}}))
    assert webp.headers["content-type"] == "image/webp" and webp.content[:4] == b"RIFF" and webp.content[8:12] == b"WEBP"
    assert _open(webp.content).size == (60, 60)
    avif = httpx.get(files.get_public_url("wide.png", {"transform": {"width": 30, "format": "avif"}}))
    assert avif.headers["content-type"] == "image/avif" and avif.content[4:12] == b"ftypavif"
    assert _open(avif.content).size == (30, 20)
    # No format named: WebP for a browser that accepts it (as Supabase), the source's format otherwise.
    url = files.get_public_url("wide.png", {"transform": {"width": 30}})
    assert httpx.get(url, headers={"accept": "image/avif,image/webp,*/*"}).headers["content-type"] == "image/webp"
    assert httpx.get(url, headers={"accept": "*/*"}).headers["content-type"] == "image/png"


def test_quality_changes_jpeg_size(service, buckets):
    public, _ = buckets
    files = service.storage.from_(public)
    files.upload("photo.jpg", _picture(400, 300, "JPEG"), {"content-type": "image/jpeg"})
    sizes = {}
    for quality in (20, 90):
        body = httpx.get(files.get_public_url("photo.jpg", {"transform": {"width": 200, "quality": quality}})).content
        picture = _open(body)
        assert (picture.format, picture.size) == ("JPEG", (200, 150))
        sizes[quality] = len(body)
    assert sizes[20] < sizes[90], sizes


def test_signed_url_and_download_with_transform(image_server, buckets):
    _, private = buckets
    alice, _ = _user(image_server, "alice")
    bob, _ = _user(image_server, "bob")
    files = alice.storage.from_(private)
    files.upload("me.jpg", _picture(320, 240, "JPEG"), {"content-type": "image/jpeg"})

    signed = files.create_signed_url("me.jpg", 60, {"transform": {"width": 64, "height": 64, "resize": "contain"}})
    assert "/storage/v1/render/image/sign/" in signed["signedURL"], signed
    response = httpx.get(signed["signedURL"])  # no key: the token opens it
    assert response.status_code == 200, response.text
    assert (_open(response.content).format, _open(response.content).size) == ("JPEG", (64, 48))
    # The token names its object and its transform: another path, or a tampered token, opens nothing.
    other = signed["signedURL"].replace("/me.jpg?", "/other.jpg?")
    assert httpx.get(other).json()["code"] == "InvalidSignature"
    assert httpx.get(signed["signedURL"][:-3] + "abc").status_code == 400
    plain = files.create_signed_url("me.jpg", 60)
    assert "/storage/v1/object/sign/" in plain["signedURL"]

    # A download with a transform goes to /render/image/authenticated under the caller's policies.
    data = files.download("me.jpg", {"transform": {"width": 32, "height": 32, "resize": "fill", "format": "webp"}})
    assert (_open(data).format, _open(data).size) == ("WEBP", (32, 32))
    with pytest.raises(StorageApiError) as refused:
        bob.storage.from_(private).download("me.jpg", {"transform": {"width": 32}})
    assert refused.value.status == "404"
    with pytest.raises(StorageApiError) as refused:
        bob.storage.from_(private).create_signed_url("me.jpg", 60, {"transform": {"width": 32}})
    assert refused.value.status == "404"
    # A private bucket's objects have no public render.
    hidden = httpx.get(alice.storage.from_(private).get_public_url("me.jpg", {"transform": {"width": 10}}))
    assert hidden.status_code == 400 and hidden.json()["statusCode"] == "404"


def test_refusals(image_server, service, buckets):
    public, _ = buckets
    files = service.storage.from_(public)
    files.upload("notes.txt", b"not a picture", {"content-type": "text/plain"})
    refused = httpx.get(files.get_public_url("notes.txt", {"transform": {"width": 10}}))
    assert refused.status_code == 400 and refused.json()["statusCode"] == "415" and refused.json()["code"] == "InvalidMimeType"
    files.upload("tiny.png", _picture(20, 20, "PNG"), {"content-type": "image/png"})
    base = f"{image_server.url}/storage/v1/render/image/public/{public}/tiny.png"
    for query in ("width=-1", "width=ten", "quality=5", "resize=stretch", "format=bmp"):
        bad = httpx.get(f"{base}?{query}")
        assert bad.status_code == 400 and bad.json()["code"] == "InvalidRequest", query
    with pytest.raises(StorageApiError) as caught:
        service.storage.from_(public).create_signed_url("tiny.png", 60, {"transform": {"width": 10, "resize": "stretch"}})
    assert caught.value.status == "400"


def test_source_limits(apple_issuer):
    """A server with small limits refuses a large source file and a source of too many pixels (a decompression bomb:
    a small file that decodes to a huge image)."""
    server_gen = _server(apple_issuer, "caravan-images-limits-", CARAVAN_STORAGE_IMAGE_MAX_SOURCE_SIZE="200000",
                         CARAVAN_STORAGE_IMAGE_MAX_PIXELS="1000000")
    server = next(server_gen)
    try:
        client = create_client(server.url, server.service_role_key)
        probe = httpx.get(f"{server.url}/storage/v1/render/image/public/none/none.png")
        if probe.status_code == 501:
            if os.environ.get("CARAVAN_REQUIRE_VIPS") == "1":
                pytest.fail("libvips is not installed; this run requires it (CARAVAN_REQUIRE_VIPS=1)")
            pytest.skip("libvips is not installed (SKIPPED)")
        bucket = f"limits-{uuid.uuid4().hex[:8]}"
        client.storage.create_bucket(bucket, options={"public": True})
        files = client.storage.from_(bucket)
        bomb = io.BytesIO()
        Image.new("L", (2000, 2000)).save(bomb, format="PNG", optimize=True)  # 4 megapixels in a few kilobytes
        assert len(bomb.getvalue()) < 50_000
        files.upload("bomb.png", bomb.getvalue(), {"content-type": "image/png"})
        refused = httpx.get(files.get_public_url("bomb.png", {"transform": {"width": 10}}))
        assert refused.status_code == 413 and refused.json()["code"] == "EntityTooLarge", refused.text
        assert "resolution" in refused.json()["message"]
        noisy = Image.frombytes("RGB", (400, 400), os.urandom(400 * 400 * 3))
        big = io.BytesIO()
        noisy.save(big, format="PNG")
        assert len(big.getvalue()) > 200_000
        files.upload("big.png", big.getvalue(), {"content-type": "image/png"})
        refused = httpx.get(files.get_public_url("big.png", {"transform": {"width": 10}}))
        assert refused.status_code == 413 and "file is too large" in refused.json()["message"]
        files.upload("fine.png", _picture(300, 300, "PNG"), {"content-type": "image/png"})
        assert _open(httpx.get(files.get_public_url("fine.png", {"transform": {"width": 10}})).content).size == (10, 10)
    finally:
        server_gen.close()


def test_without_libvips(apple_issuer):
    """Where libvips cannot be loaded the server still serves: the render routes answer 501 FeatureNotEnabled, a
    signed URL with a transform is a plain download's (as storage-api's with transformations off), and the start
    log says once that transformations are off."""
    server_gen = _server(apple_issuer, "caravan-images-off-", CARAVAN_VIPS_LIBRARY="/nonexistent/libvips.so.42")
    server = next(server_gen)
    try:
        client = create_client(server.url, server.service_role_key)
        bucket = f"off-{uuid.uuid4().hex[:8]}"
        client.storage.create_bucket(bucket, options={"public": True})
        files = client.storage.from_(bucket)
        files.upload("p.png", _picture(20, 20, "PNG"), {"content-type": "image/png"})
        off = httpx.get(files.get_public_url("p.png", {"transform": {"width": 10}}))
        assert off.status_code == 501, off.text
        body = off.json()
        assert (body["statusCode"], body["code"], body["error"]) == ("501", "FeatureNotEnabled", "FeatureNotEnabled")
        assert "libvips" in body["message"]
        with pytest.raises(StorageApiError) as caught:
            files.download("p.png", {"transform": {"width": 10}})
        assert caught.value.status == "501"
        signed = files.create_signed_url("p.png", 60, {"transform": {"width": 10}})
        assert "/storage/v1/object/sign/" in signed["signedURL"]
        assert httpx.get(signed["signedURL"]).content == files.download("p.png")
        log = (server.deployment.data_dir / "serve.log").read_text(errors="replace")
        assert log.count("storage image transformations off") == 1, log[-2000:]
    finally:
        server_gen.close()

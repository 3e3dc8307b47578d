"""Body limits: every endpoint that reads a body takes one of exactly its limit and answers one byte past it 413 in
its own error shape (PostgREST JSON, sync, storage JSON, GoTrue JSON, the console's), never a 500, and refuses a
declared `Content-Length` past the limit before any of the body arrives."""

from __future__ import annotations

import json
import socket
from urllib.parse import urlparse

import httpx
import pytest

MiB = 1024 * 1024


def padded(document: dict, size: int) -> bytes:
    """`document` as JSON followed by spaces up to exactly `size` bytes (still valid JSON)."""
    text = json.dumps(document).encode()
    assert len(text) <= size
    return text + b" " * (size - len(text))


# (name, path, key, document, limit, error code field, expected code)
ENDPOINTS = [
    ("rest insert", "/rest/v1/places", "service", [], 16 * MiB, "code", "CARAVAN_PAYLOAD_TOO_LARGE"),
    ("rest rpc", "/rest/v1/rpc/export_my_data", "service", {}, 16 * MiB, "code", "CARAVAN_PAYLOAD_TOO_LARGE"),
    ("sync push", "/sync/v1/push", "service", {"client_id": "limits", "mutations": []}, 5 * MiB, "code", "CARAVAN_PAYLOAD_TOO_LARGE"),
    ("storage bucket", "/storage/v1/bucket", "service", {"name": "limits-bucket", "public": False}, MiB, "statusCode", "413"),
    ("auth signup", "/auth/v1/signup", "anon", {"email": "limits@example.com", "password": "a-long-password"}, 64 * 1024,
     "code", "validation_failed"),
    ("console sign-in", "/admin/api/session", "none", {"email": "nobody@example.com", "password": "wrong-password"}, 64 * 1024,
     "code", "validation_failed"),
    ("realtime broadcast", "/realtime/v1/api/broadcast", "service", {"messages": []}, MiB, None, None),
]


def headers(server, key: str) -> dict[str, str]:
    chosen = {"service": server.service_role_key, "anon": server.anon_key}.get(key)
    base = {"Content-Type": "application/json"}
    if chosen:
        base.update({"apikey": chosen, "Authorization": f"Bearer {chosen}"})
    return base


@pytest.mark.parametrize("name,path,key,document,limit,code_field,code", ENDPOINTS, ids=[e[0] for e in ENDPOINTS])
def test_body_limit_at_and_one_byte_past(server, name, path, key, document, limit, code_field, code):
    with httpx.Client(base_url=server.url, timeout=120) as client:
        at = client.post(path, content=padded(document, limit), headers=headers(server, key))
        assert at.status_code != 413, f"{name}: a body of exactly the limit was refused: {at.text[:300]}"
        assert at.status_code < 500, f"{name}: {at.status_code} {at.text[:300]}"
        past = client.post(path, content=padded(document, limit + 1), headers=headers(server, key))
        assert past.status_code == 413, f"{name}: {past.status_code} {past.text[:300]}"
        assert past.headers["content-type"].startswith("application/json"), past.headers
        body = past.json()
        assert body, f"{name}: empty error body"
        if code_field:
            assert str(body[code_field]) == code, body
            assert body.get("message") or body.get("msg"), body


@pytest.mark.parametrize("path,key", [("/rest/v1/places", "service"), ("/sync/v1/push", "service"), ("/auth/v1/signup", "anon"),
                                       ("/storage/v1/bucket", "service")])
def test_a_declared_length_past_the_limit_is_refused_before_the_body_arrives(server, path, key):
    """Only the head is sent: the answer comes without the server waiting for a body of hundreds of megabytes."""
    url = urlparse(server.url)
    head = [f"POST {path} HTTP/1.1", f"Host: {url.hostname}:{url.port}", "Content-Type: application/json",
            f"Content-Length: {512 * MiB}"]
    head += [f"{name}: {value}" for name, value in headers(server, key).items() if name != "Content-Type"]
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    status_line = received.split(b"\r\n", 1)[0]
    assert status_line.startswith(b"HTTP/1.1 413"), received[:300]

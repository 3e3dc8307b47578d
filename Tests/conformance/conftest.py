"""Black-box conformance fixtures: a real `caravan serve` loaded with the Riyadh places data.

Environment:
  CARAVAN_BIN          path of the caravan binary (default: <repo>/.build/debug/caravan)
  CARAVAN_SHARED_DATA  the shared data folder (default: ../shared/data relative to the repo root);
                       a relative value is resolved against the repo root.
  CARAVAN_TEST_ENGINE  sqlite (default) or postgres: every deployment then gets a fresh database on the cluster of
                       CARAVAN_TEST_DATABASE_URL and `caravan serve --database` (see deployments.py).

What runs where: the Swift suite checks semantics on both engines (reads, writes, aggregates, embedding, search,
policies, sync); this suite checks that the official clients work against a real server, and what only a whole
process shows (several instances, backup and copy, upgrades, the console in a browser). The files that check the
clients' view of query semantics run in the SQLite pass only (ONE_ENGINE_FILES): the engines' agreement on those
semantics is the Swift suite's job, so running them again on PostgreSQL would check nothing new.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from supabase import Client, create_client

from deployments import Deployment, new_deployment

REPO_ROOT = Path(__file__).resolve().parents[2]

ONE_ENGINE_FILES = {"test_aggregates.py", "test_embedding.py", "test_search.py", "test_writes.py"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In the PostgreSQL pass, leaves out the files whose semantics the Swift suite checks on both engines."""
    if os.environ.get("CARAVAN_TEST_ENGINE", "sqlite") != "postgres":
        return
    kept = [item for item in items if item.path.name not in ONE_ENGINE_FILES]
    left_out = [item for item in items if item.path.name in ONE_ENGINE_FILES]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


def _resolve(env: str, default: str) -> Path:
    value = os.environ.get(env) or default
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = REPO_ROOT / path
    return path.resolve()


CARAVAN_BIN = _resolve("CARAVAN_BIN", ".build/debug/caravan")
SHARED_DATA = _resolve("CARAVAN_SHARED_DATA", "../shared/data")
PLACES_JSON = SHARED_DATA / "riyadh" / "places.json"

SHUTDOWN_TIMEOUT = 10.0
STARTUP_TIMEOUT = 30.0


def place_row(entry: dict[str, Any]) -> dict[str, Any]:
    """The `places` row a places.json entry should become (the documented field renames only)."""

    def first(*keys: str) -> Any:
        for key in keys:
            if entry.get(key) is not None:
                return entry[key]
        return None

    return {
        "id": entry["id"],
        "name_ar": first("name_ar", "name_en"),
        "name_en": entry.get("name_en"),
        "category": first("category_en") or "other",
        "category_ar": first("category", "category_ar") or "",
        "latitude": first("lat", "latitude"),
        "longitude": first("lng", "longitude"),
        "google_maps_url": entry.get("google_maps_url"),
        "address_ar": first("address_ar", "address", "street"),
        "phone": entry.get("phone"),
        "website": entry.get("website"),
        "tags": entry.get("tags"),
        "is_trending": bool(first("trending", "is_trending") or False),
    }


@dataclass
class Server:
    url: str
    rest_url: str
    anon_key: str
    service_role_key: str
    data_dir: Path
    deployment: Deployment
    places: list[dict[str, Any]] = field(repr=False)
    process: subprocess.Popen = field(repr=False)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run(*args: str) -> subprocess.CompletedProcess:
    # A bound on a hang, not a speed check: the PostgreSQL import of places.json takes about a minute in a debug build.
    return subprocess.run(
        [str(CARAVAN_BIN), *args], capture_output=True, text=True, timeout=600, check=False
    )


def _start(deployment: Deployment, log_path: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, int]:
    """Start `caravan serve` on a free loopback port; retry if the port was taken meanwhile."""
    last_log = ""
    for _ in range(3):
        port = _free_port()
        log = open(log_path, "ab")
        proc = subprocess.Popen(
            [str(CARAVAN_BIN), "serve", *deployment.serve_args, "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **deployment.serve_env, **(env or {})},
        )
        log.close()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0)
                if r.status_code == 200:
                    return proc, port
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
            pytest.fail(f"caravan serve did not answer /health within {STARTUP_TIMEOUT}s; log: {log_path}")
        last_log = log_path.read_text(errors="replace")
    pytest.fail(f"caravan serve exited before answering /health:\n{last_log}")


@contextlib.contextmanager
def serving_command(command: list[str], cwd: Path, log_path: Path, env: dict[str, str] | None = None):
    """Runs a `serve` command line of some binary (a release copied alone, a package's own binary) on a free port;
    yields its base URL once /health answers; on exit stops it with SIGTERM and requires exit 0."""
    port = _free_port()
    log = open(log_path, "wb")
    server = subprocess.Popen([*command, "--port", str(port)], cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, env=env)
    log.close()
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            try:
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, log_path.read_text(errors="replace")[-3000:]
            time.sleep(0.1)
        yield base
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=SHUTDOWN_TIMEOUT) == 0, log_path.read_text(errors="replace")[-3000:]


@pytest.fixture(scope="session")
def places_source() -> list[dict[str, Any]]:
    if not PLACES_JSON.is_file():
        pytest.skip(
            f"conformance data is absent: {PLACES_JSON} not found "
            "(set CARAVAN_SHARED_DATA to the folder holding riyadh/places.json)"
        )
    with open(PLACES_JSON, encoding="utf-8") as f:
        return json.load(f)


APPLE_AUDIENCE = "com.caravan.conformance"


@dataclass
class AppleIssuer:
    """A key pair standing in for Apple's: the server trusts its public half through a JWKS file."""

    private_key: Any
    kid: str
    jwks_path: Path


@pytest.fixture(scope="session")
def apple_issuer(tmp_path_factory) -> AppleIssuer:
    from cryptography.hazmat.primitives.asymmetric import rsa
    from jwt.algorithms import RSAAlgorithm

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update({"kid": "test-apple-key", "alg": "RS256", "use": "sig"})
    path = tmp_path_factory.mktemp("apple") / "jwks.json"
    path.write_text(json.dumps({"keys": [jwk]}))
    return AppleIssuer(private_key=key, kid="test-apple-key", jwks_path=path)


def auth_environment(apple: AppleIssuer, **overrides: str) -> dict[str, str]:
    """Auth settings of the conformance servers: every request comes from 127.0.0.1, so the per-IP limits are
    raised; the per-identifier sign-in limit stays low for the brute-force test."""
    env = {
        "CARAVAN_AUTH_RATE_LIMIT_SIGN_IN": "100000",
        "CARAVAN_AUTH_RATE_LIMIT_SIGN_UP": "100000",
        "CARAVAN_AUTH_RATE_LIMIT_OTP": "100000",
        "CARAVAN_AUTH_RATE_LIMIT_VERIFY": "100000",
        "CARAVAN_AUTH_RATE_LIMIT_REFRESH": "100000",
        "CARAVAN_AUTH_RATE_LIMIT_SIGN_IN_PER_IDENTIFIER": "5",
        "CARAVAN_AUTH_RATE_LIMIT_OTP_PER_IDENTIFIER": "100",
        "CARAVAN_AUTH_RATE_LIMIT_VERIFY_PER_IDENTIFIER": "100",
        "CARAVAN_AUTH_REFRESH_REUSE_INTERVAL": "0",
        "CARAVAN_AUTH_APPLE_JWKS": str(apple.jwks_path),
        "CARAVAN_AUTH_APPLE_AUDIENCES": APPLE_AUDIENCE,
    }
    env.update(overrides)
    return env


@pytest.fixture(scope="session")
def server(places_source, apple_issuer) -> Server:
    if not (CARAVAN_BIN.is_file() and os.access(CARAVAN_BIN, os.X_OK)):
        pytest.fail(f"caravan binary not found at {CARAVAN_BIN}: run `swift build` or set CARAVAN_BIN")

    deployment = new_deployment("caravan-conformance-")
    try:
        imported = _run("import", "places", str(PLACES_JSON), *deployment.args, "--json")
        assert imported.returncode == 0, f"import failed ({imported.returncode}):\n{imported.stdout}\n{imported.stderr}"
        summary = json.loads(imported.stdout)
        assert summary["total"] == len(places_source), summary
        assert summary["inserted"] == len(places_source), summary
        assert summary["rejected"] == 0, summary["rejections"][:5]

        keys_run = _run("keys", *deployment.args, "--json")
        assert keys_run.returncode == 0, keys_run.stderr
        keys = json.loads(keys_run.stdout)

        with serving(deployment, auth_environment(apple_issuer)) as (proc, url):
            yield Server(
                url=url,
                rest_url=f"{url}/rest/v1",
                anon_key=keys["anon_key"],
                service_role_key=keys["service_role_key"],
                data_dir=deployment.data_dir,
                deployment=deployment,
                places=[place_row(e) for e in places_source],
                process=proc,
            )
    finally:
        deployment.remove()


@contextlib.contextmanager
def serving(deployment: Deployment, env: dict[str, str], log_name: str = "serve.log"):
    """Runs `caravan serve` on `deployment`; on exit, stops it with SIGTERM and requires a clean exit 0."""
    log_path = deployment.data_dir / log_name
    proc, port = _start(deployment, log_path, env)
    try:
        yield proc, f"http://127.0.0.1:{port}"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=SHUTDOWN_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
                pytest.fail(f"caravan serve did not exit within {SHUTDOWN_TIMEOUT}s of SIGTERM")
        else:
            code = proc.returncode
            pytest.fail(f"caravan serve died during the tests (exit {code}):\n{log_path.read_text(errors='replace')[-4000:]}")
        assert code == 0, (
            f"caravan serve exited {code} after SIGTERM (graceful shutdown must exit 0):\n"
            f"{log_path.read_text(errors='replace')[-4000:]}"
        )


@pytest.fixture(scope="session")
def places(server) -> list[dict[str, Any]]:
    """Expected `places` rows, derived from places.json."""
    return server.places


@pytest.fixture(scope="session")
def anon(server) -> Client:
    return create_client(server.url, server.anon_key)


@pytest.fixture(scope="session")
def service(server) -> Client:
    return create_client(server.url, server.service_role_key)


@pytest.fixture(scope="session")
def http(server):
    """Raw HTTP with the anon key, for what the client cannot express."""
    with httpx.Client(
        base_url=server.rest_url,
        headers={"apikey": server.anon_key, "Authorization": f"Bearer {server.anon_key}"},
        timeout=30.0,
    ) as client:
        yield client


@pytest.fixture(scope="session")
def bare_http(server):
    """Raw HTTP with no key at all."""
    with httpx.Client(base_url=server.rest_url, timeout=30.0) as client:
        yield client

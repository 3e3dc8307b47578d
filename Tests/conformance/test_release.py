"""The release: one file, copied alone into an empty directory, serves (issue 40 item 1).

scripts/test makes the archive with scripts/release and names it in CARAVAN_RELEASE_ARCHIVE (and sets
CARAVAN_REQUIRE_RELEASE=1, so that a missing archive fails instead of skipping). The binary runs with a bare
environment (no toolchain on PATH, no LD_LIBRARY_PATH) from a directory holding nothing else: the Swift runtime,
Foundation, the migrations and the admin console must all be inside it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import httpx
import pytest

from conftest import REPO_ROOT, serving_command
from deployments import ENGINE, create_database, drop_database

ARCHIVE = os.environ.get("CARAVAN_RELEASE_ARCHIVE")


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    """The release binary, alone in an empty directory."""
    if not ARCHIVE:
        if os.environ.get("CARAVAN_REQUIRE_RELEASE") == "1":
            pytest.fail("CARAVAN_RELEASE_ARCHIVE is unset: scripts/release did not make the archive")
        pytest.skip("no release archive (run scripts/release and set CARAVAN_RELEASE_ARCHIVE)")
    archive = Path(ARCHIVE)
    expected = (archive.parent / (archive.name + ".sha256")).read_text().split()
    assert expected[1] == archive.name, "the checksum file names the archive"
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == expected[0], "the archive matches its checksum"
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile()]
        assert [m.name for m in members] == [f"{archive.name.removesuffix('.tar.gz')}/caravan"], "one file in the archive"
        unpacked = tmp_path_factory.mktemp("unpacked")
        tar.extractall(unpacked, filter="data")
    alone = tmp_path_factory.mktemp("alone")
    shutil.copy2(unpacked / members[0].name, alone / "caravan")
    return alone


def bare(directory: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs ./caravan in `directory` with a bare environment."""
    return subprocess.run(["./caravan", *args], cwd=directory, env={"PATH": "/usr/bin:/bin", "HOME": str(directory)},
                          capture_output=True, text=True, timeout=timeout)


def test_the_release_binary_loads_only_the_c_and_cpp_runtimes(release):
    linked = subprocess.run(["ldd", str(release / "caravan")], capture_output=True, text=True).stdout
    loaded = {re.split(r"\s", line.strip())[0] for line in linked.splitlines() if line.strip()}
    assert loaded, linked
    allowed = re.compile(r"linux-vdso\.so\.1|/?.*ld-linux.*\.so\.\d|libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1")
    assert all(allowed.fullmatch(name) for name in loaded), f"no Swift runtime, Foundation, SQLite or zlib library loaded: {linked}"


def test_version_names_the_release_commit_and_build_time(release):
    answer = bare(release, "--version")
    assert answer.returncode == 0, answer.stderr
    match = re.fullmatch(r"caravan (\d+\.\d+\.\d+) \(commit ([0-9a-f]{40}), built (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\)\n", answer.stdout)
    assert match, answer.stdout
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True).stdout.strip()
    assert match.group(2) == head, "the release says which commit it was built from"
    built = time.mktime(time.strptime(match.group(3), "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert abs(time.time() - built) < 6 * 3600, f"built {match.group(3)}: made by this run"


def test_a_copied_binary_alone_migrates_serves_the_api_and_the_console(release):
    database = create_database() if ENGINE == "postgres" else None
    data = ["--database", database] if database else ["--data-dir", "data"]
    try:
        migrated = bare(release, "migrate", *data, timeout=300)
        assert migrated.returncode == 0, migrated.stderr
        assert "places-0001-create" in migrated.stdout, "the compiled-in migrations ran"
        keys = bare(release, "keys", *data, "--json")
        assert keys.returncode == 0, keys.stderr
        anon = json.loads(keys.stdout)["anon_key"]
        with serving_command(["./caravan", "serve", *data], release, release / "serve.log",
                             env={"PATH": "/usr/bin:/bin", "HOME": str(release)}) as base:
            categories = httpx.get(base + "/rest/v1/categories?select=id&limit=1", headers={"apikey": anon})
            assert categories.status_code == 200 and categories.json() == [], categories.text
            signed_up = httpx.post(base + "/auth/v1/signup", headers={"apikey": anon},
                                   json={"email": "alone@example.com", "password": "a-long-password"})
            assert signed_up.status_code == 200 and signed_up.json().get("access_token"), signed_up.text
            shell = httpx.get(base + "/admin")
            assert shell.status_code == 200 and "<script" in shell.text, "the console's shell is compiled in"
            script = httpx.get(base + "/admin/app.js")
            assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
            openapi = httpx.get(base + "/rest/v1/", headers={"apikey": anon})
            assert openapi.status_code == 200 and "/places" in openapi.json()["paths"], "the API describes itself"
        left = sorted(p.name for p in release.iterdir())
        assert left == (["caravan", "serve.log"] if database else ["caravan", "data", "serve.log"]), left
    finally:
        shutil.rmtree(release / "data", ignore_errors=True)
        if database:
            drop_database(database)

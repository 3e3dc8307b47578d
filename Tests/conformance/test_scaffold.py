"""`caravan new NAME`, used as a newcomer would (issue 40 item 8): the package it writes builds with `swift build`,
its binary migrates and serves the new app (REST under its policy, its RPC, auth), and its own `swift test` passes.

The package depends on this checkout (`--caravan-path`), so SwiftPM builds Caravan again in the package's own
`.build`: several minutes on two cores. It runs in the SQLite pass (the package's tests cover PostgreSQL when the
test cluster is named), and only with CARAVAN_TEST_SCAFFOLD_BUILD=1; `ScaffoldTests` (Swift) checks the files
themselves on every run.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid

import pytest
from supabase import create_client

from conftest import CARAVAN_BIN, REPO_ROOT, serving_command
from deployments import ENGINE

pytestmark = pytest.mark.skipif(
    ENGINE != "sqlite" or os.environ.get("CARAVAN_TEST_SCAFFOLD_BUILD") != "1",
    reason="builds a whole package: SQLite pass with CARAVAN_TEST_SCAFFOLD_BUILD=1 only",
)


def run(args: list[str], cwd, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_a_new_package_builds_serves_its_app_and_passes_its_own_tests(tmp_path):
    created = run([str(CARAVAN_BIN), "new", "Tasks", "--path", str(tmp_path), "--caravan-path", str(REPO_ROOT)], tmp_path)
    assert created.returncode == 0, created.stderr
    package = tmp_path / "Tasks"
    built = run(["swift", "build"], package, timeout=3600)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    serve_and_test(package, tmp_path)


def serve_and_test(package, tmp_path):
    """The built package's binary migrates and serves the app under its policy; then its own tests pass."""
    binary = package / ".build" / "debug" / "caravan-tasks"

    data = tmp_path / "tasks-data"
    migrated = run([str(binary), "migrate", "--data-dir", str(data)], package)
    assert migrated.returncode == 0 and "tasks-0001-create" in migrated.stdout, migrated.stderr
    anon = json.loads(run([str(binary), "keys", "--data-dir", str(data), "--json"], package).stdout)["anon_key"]

    with serving_command([str(binary), "serve", "--data-dir", str(data)], package, tmp_path / "serve.log") as base:
        ada = create_client(base, anon)
        session = ada.auth.sign_up({"email": f"ada-{uuid.uuid4().hex[:8]}@example.com", "password": "a-long-password"})
        me = session.user.id
        ada.table("tasks").insert({"owner": me, "title": "water the palms", "pinned": True}).execute()
        ada.table("tasks").insert({"owner": me, "title": "call home"}).execute()
        with pytest.raises(Exception) as refused:
            ada.table("tasks").insert({"owner": str(uuid.uuid4()), "title": "someone else's"}).execute()
        assert "42501" in str(refused.value), "the owner policy refuses another owner"
        rows = ada.table("tasks").select("title,pinned").order("title").execute().data
        assert rows == [{"title": "call home", "pinned": False}, {"title": "water the palms", "pinned": True}]
        assert ada.rpc("count_tasks", {"only_pinned": True}).execute().data == 1
        assert create_client(base, anon).table("tasks").select("id").execute().data == [], "anonymous callers see none"

    tested = run(["swift", "test"], package, timeout=3600)
    assert tested.returncode == 0, tested.stdout[-4000:] + tested.stderr[-4000:]
    assert "TasksPolicyTests" in tested.stdout + tested.stderr

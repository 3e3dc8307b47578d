"""Deployments for the conformance suite, on either engine.

CARAVAN_TEST_ENGINE=sqlite (default) keeps each deployment in a temporary data directory's caravan.sqlite.
CARAVAN_TEST_ENGINE=postgres gives each deployment a fresh database on the test cluster named by
CARAVAN_TEST_DATABASE_URL (scripts/postgres-cluster start), and `caravan` gets `--database URL`.
With CARAVAN_TEST_POOLER_URL (a PgBouncer in transaction mode in front of that cluster: scripts/pgbouncer) and/or
CARAVAN_TEST_READ_REPLICA_URL (a streaming standby of it: scripts/postgres-cluster standby), `caravan serve` reaches
its database through the pooler (`db_pooler=transaction`, LISTEN on `--listen-url` straight to the cluster) and reads
from the standby (`--read-replica`, `read_replica_consistency=strong`); every other command goes straight to the
cluster.
Tests read the deployment's tables through `Deployment.fetch_one`, whatever the engine (psycopg on Postgres).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ENGINE = os.environ.get("CARAVAN_TEST_ENGINE", "sqlite")
# As conftest.py resolves it (which imports this module).
CARAVAN_BIN = (Path(__file__).resolve().parents[2] / Path(os.environ.get("CARAVAN_BIN") or ".build/debug/caravan").expanduser()).resolve()
CLUSTER_URL = os.environ.get("CARAVAN_TEST_DATABASE_URL") or None
POOLER_URL = os.environ.get("CARAVAN_TEST_POOLER_URL") or None
READ_REPLICA_URL = os.environ.get("CARAVAN_TEST_READ_REPLICA_URL") or None

if ENGINE not in ("sqlite", "postgres"):
    raise RuntimeError(f"CARAVAN_TEST_ENGINE must be sqlite or postgres, not {ENGINE!r}")
if ENGINE == "postgres" and not CLUSTER_URL:
    raise RuntimeError("CARAVAN_TEST_ENGINE=postgres needs CARAVAN_TEST_DATABASE_URL (scripts/postgres-cluster start)")


def database_url(name: str, server: str | None = None) -> str:
    """The test cluster's URL (or `server`'s: the pooler, the standby) with another database name."""
    base = server or CLUSTER_URL
    assert base, "CARAVAN_TEST_DATABASE_URL is unset"
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path="/" + name))


def create_database() -> str:
    """A new, empty database on the test cluster; returns its URL."""
    import psycopg

    name = "caravan_conformance_" + uuid.uuid4().hex
    with psycopg.connect(CLUSTER_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')  # generated name, not user text
    return database_url(name)


def drop_database(url: str) -> None:
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(CLUSTER_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class Deployment:
    """Where one `caravan` deployment of a test lives."""

    data_dir: Path
    database_url: str | None = None

    @property
    def args(self) -> list[str]:
        """The data options every data command takes."""
        options = ["--data-dir", str(self.data_dir)]
        if self.database_url:
            options += ["--database", self.database_url]
        return options

    @property
    def serve_args(self) -> list[str]:
        """`args` for `caravan serve`: through the pooler and reading from the standby when the run has them."""
        if not self.database_url:
            return self.args
        name = urlsplit(self.database_url).path.lstrip("/")
        options = ["--data-dir", str(self.data_dir)]
        if POOLER_URL:
            options += ["--database", database_url(name, POOLER_URL), "--listen-url", self.database_url]
        else:
            options += ["--database", self.database_url]
        if READ_REPLICA_URL:
            options += ["--read-replica", database_url(name, READ_REPLICA_URL)]
        return options

    @property
    def serve_env(self) -> dict[str, str]:
        """The environment `caravan serve` adds for `serve_args`."""
        env: dict[str, str] = {}
        if self.database_url and POOLER_URL:
            env["CARAVAN_DB_POOLER"] = "transaction"
        if self.database_url and READ_REPLICA_URL:
            env["CARAVAN_READ_REPLICA_CONSISTENCY"] = "strong"
        return env

    def fetch_one(self, sql: str, params: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        """One row of a query written with `?` placeholders and SQL both engines accept."""
        if self.database_url:
            import psycopg

            with psycopg.connect(self.database_url) as db:
                return db.execute(sql.replace("?", "%s"), params).fetchone()
        with sqlite3.connect(f"file:{self.data_dir / 'caravan.sqlite'}?mode=ro", uri=True) as db:
            return db.execute(sql, params).fetchone()

    def signing_secret(self) -> str:
        """The base64 signing secret: jwt_secret.json (SQLite) or the `caravan_secrets` row (Postgres)."""
        if self.database_url:
            row = self.fetch_one("SELECT secret FROM caravan_secrets WHERE name = ?", ("jwt",))
            assert row is not None, "no signing secret in caravan_secrets"
            return row[0]
        return json.loads((self.data_dir / "jwt_secret.json").read_text())["secret"]

    def signing_secret_bytes(self) -> bytes:
        return base64.b64decode(self.signing_secret())

    def remove(self) -> None:
        shutil.rmtree(self.data_dir, ignore_errors=True)
        if self.database_url:
            drop_database(self.database_url)


def new_deployment(prefix: str, engine: str = ENGINE, empty: bool = False) -> Deployment:
    """A fresh deployment of `engine`: a new temporary data directory, plus a new database for Postgres.

    Created with `caravan migrate` (only it and `serve` create a deployment; `keys`, `import`, `user`… refuse a
    directory without one) unless `empty` (a restore target, a fixture copied in)."""
    data_dir = Path(tempfile.mkdtemp(prefix=prefix))
    deployment = Deployment(data_dir, create_database()) if engine == "postgres" else Deployment(data_dir)
    if not empty:
        migrated = subprocess.run([str(CARAVAN_BIN), "migrate", *deployment.args], capture_output=True, text=True, timeout=300)
        assert migrated.returncode == 0, migrated.stderr
    return deployment

"""README.md, checked as a newcomer would use it: every command it shows is run, its Swift code is compiled code,
and every relative link of the documentation leads somewhere.

Commands. Every command line of README.md's ```sh blocks (a line ending in a backslash joins the next) must be one
that `COMMANDS` below knows, or `test_every_readme_command_is_run_here` fails: a command added to the README is run
here before it lands. The commands run with their own text in bash, in a fresh folder, with two differences from a
newcomer's shell:
  - `swift run caravan …` runs the built binary ($CARAVAN_BIN) with the same arguments (building it is the test
    command's first step);
  - the server listens on a free port, given by CARAVAN_PORT (which the README's `caravan serve` reads), and
    `127.0.0.1:8080` in the other commands names that port.
The SQLite pass runs the SQLite server and everything after it; the PostgreSQL pass runs `serve --database`.
`scripts/test` is the command that runs this file (CI's `.ci/run` ends in it). `scripts/docs` takes a minute or more
(a symbol-graph build of two targets, then DocC), so by default its script, catalogs and snippet slices are checked;
with CARAVAN_TEST_DOCS=1 the SQLite pass runs it and checks that the archives show the articles' snippets.

Swift code. README.md's ```swift blocks are parts of the files in Snippets/, word for word; `swift build` compiles
those files, so the README's code compiles.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import httpx
import pytest

from conftest import CARAVAN_BIN, REPO_ROOT, STARTUP_TIMEOUT, SHUTDOWN_TIMEOUT, _free_port
from deployments import ENGINE, create_database, drop_database

README = REPO_ROOT / "README.md"

# `swift run caravan ARGS` runs the built binary; `serve` replaces the shell, so a signal reaches the server itself.
SWIFT_RUN_SHIM = r"""
swift() {
    if [ "$1" = run ] && [ "$2" = caravan ]; then
        shift 2
        if [ "$1" = serve ]; then exec "$CARAVAN_BIN" "$@"; fi
        "$CARAVAN_BIN" "$@"
    else
        echo "test_readme: only 'swift run caravan' is mapped, not: swift $*" >&2
        return 97
    fi
}
"""

SERVE_SQLITE = "swift run caravan serve"
SERVE_POSTGRES = 'swift run caravan serve --database "$DATABASE_URL"'
KEYS = """ANON=$(swift run caravan keys --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["anon_key"])')"""
HEALTH = "curl -s http://127.0.0.1:8080/health"
READ = 'curl -s "http://127.0.0.1:8080/rest/v1/categories?select=id,name_en&limit=5" -H "apikey: $ANON"'
RPC = (
    'curl -s -X POST "http://127.0.0.1:8080/rest/v1/rpc/count_places" -H "apikey: $ANON" '
    """-H "Content-Type: application/json" -d '{"cat":"cafe"}'"""
)


def _is_jwt(text: str) -> bool:
    return re.fullmatch(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", text) is not None


# The commands the README may show, each with what its output must be (None: checked by its own test).
COMMANDS = {
    SERVE_SQLITE: None,
    SERVE_POSTGRES: None,
    "scripts/test": None,
    "scripts/docs": None,
    KEYS: lambda out: out == "",
    HEALTH: lambda out: json.loads(out) == {"status": "ok"},
    READ: lambda out: json.loads(out) == [],
    RPC: lambda out: json.loads(out) == 0,
}
TRY_IT = [KEYS, HEALTH, READ, RPC]


def _blocks(language: str) -> list[str]:
    """The README's fenced blocks in `language`, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```$", README.read_text(), flags=re.S | re.M)


def _commands() -> list[str]:
    """The README's shell command lines: continuations joined, comments and blank lines dropped."""
    commands = []
    for block in _blocks("sh"):
        pending = ""
        for line in block.splitlines():
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1].rstrip() + " "
                continue
            line = (pending + line.strip()).strip()
            pending = ""
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def _on_port(text: str, port: int) -> str:
    return text.replace("127.0.0.1:8080", f"127.0.0.1:{port}")


def _env(port: int, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARAVAN_") or k == "CARAVAN_BIN"}
    return {**env, "CARAVAN_BIN": str(CARAVAN_BIN), "CARAVAN_PORT": str(port), **extra}


class _Server:
    """A README serve command running in bash, in `folder`, on a free port."""

    def __init__(self, command: str, folder: Path, **env: str) -> None:
        self.port = _free_port()
        self.log = folder / "serve.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                ["bash", "-c", SWIFT_RUN_SHIM + command],
                cwd=folder, env=_env(self.port, **env), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        import time

        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.process.kill()
        pytest.fail(f"the README's serve command did not answer /health:\n{self.log.read_text(errors='replace')[-3000:]}")

    def stop(self) -> None:
        """SIGTERM, as the README says, must shut the server down gracefully: exit 0."""
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=SHUTDOWN_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            pytest.fail("the server did not exit after SIGTERM")
        assert code == 0, f"exit {code} after SIGTERM:\n{self.log.read_text(errors='replace')[-3000:]}"


def test_every_readme_command_is_run_here():
    commands = _commands()
    unknown = [c for c in commands if c not in COMMANDS]
    assert not unknown, f"README.md commands this test does not run (add them to COMMANDS): {unknown}"
    assert set(COMMANDS) <= set(commands), f"COMMANDS no longer in README.md: {set(COMMANDS) - set(commands)}"
    # The "Try it" block runs as one shell session, in the README's order.
    assert [c for c in commands if c in TRY_IT] == TRY_IT


@pytest.mark.skipif(ENGINE != "sqlite", reason="the SQLite server of the README runs in the SQLite pass")
def test_serve_then_try_it_then_python(tmp_path: Path):
    server = _Server(SERVE_SQLITE, tmp_path)
    try:
        assert (tmp_path / "caravan-data" / "caravan.sqlite").is_file(), "serve keeps its data in ./caravan-data"
        script = "set -euo pipefail\n" + SWIFT_RUN_SHIM
        for index, command in enumerate(TRY_IT):
            script += f"printf '\\n@@@ {index}\\n'\n{_on_port(command, server.port)}\n"
        script += "printf '\\n@@@ anon\\n%s' \"$ANON\"\n"
        run = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=_env(server.port), capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
        outputs = dict(re.findall(r"^@@@ (\w+)\n(.*?)(?=\n@@@ |\Z)", run.stdout, flags=re.S | re.M))
        for index, command in enumerate(TRY_IT):
            out = outputs[str(index)].strip()
            assert COMMANDS[command](out), f"{command!r} printed {out!r}"
        anon = outputs["anon"].strip()
        assert _is_jwt(anon), f"ANON is not a key: {anon!r}"

        # The README's Python lines, as written, with ANON from the shell above.
        (python_block,) = _blocks("python")
        python = subprocess.run([sys.executable, "-c", "import os\nANON = os.environ['ANON']\n" + _on_port(python_block, server.port)],
                                cwd=tmp_path, env=_env(server.port, ANON=anon), capture_output=True, text=True, timeout=60)
        assert python.returncode == 0, python.stderr
        assert python.stdout.strip() == "0", python.stdout
    finally:
        server.stop()


@pytest.mark.skipif(ENGINE != "postgres", reason="the README's PostgreSQL server runs in the PostgreSQL pass")
def test_serve_on_postgresql(tmp_path: Path):
    url = create_database()
    try:
        server = _Server(SERVE_POSTGRES, tmp_path, DATABASE_URL=url)
        try:
            keys = subprocess.run([str(CARAVAN_BIN), "keys", "--json", "--database", url], capture_output=True, text=True,
                                  timeout=60, check=True)
            anon = json.loads(keys.stdout)["anon_key"]
            read = httpx.get(f"http://127.0.0.1:{server.port}/rest/v1/categories?select=id&limit=5", headers={"apikey": anon})
            assert read.status_code == 200 and read.json() == []
            assert not (tmp_path / "caravan-data").exists(), "a PostgreSQL deployment writes nothing to the data directory"
        finally:
            server.stop()
    finally:
        drop_database(url)


def test_the_test_command_is_what_ci_runs():
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert ci.rstrip().splitlines()[-1] == "exec scripts/test"
    assert os.access(REPO_ROOT / "scripts" / "test", os.X_OK)


def test_the_docs_command_builds_both_catalogs():
    script = REPO_ROOT / "scripts" / "docs"
    assert os.access(script, os.X_OK)
    text = script.read_text()
    assert "generate-documentation" in text
    for target, folder in [("CaravanCore", "Sources/Core/CaravanCore"), ("CaravanClient", "Sources/Client/CaravanClient")]:
        assert target in text
        assert (REPO_ROOT / folder / f"{target}.docc" / f"{target}.md").is_file()
    assert '.package(url: "https://github.com/apple/swift-docc-plugin", from: "1.5.0")' in (REPO_ROOT / "Package.swift").read_text()
    # Every snippet an article shows exists, with the slice it names.
    for article in REPO_ROOT.glob("Sources/*/*/*.docc/*.md"):
        for path, slice_name in re.findall(r'@Snippet\(path: "Caravan/(Snippets/[\w/]+)", slice: "(\w+)"\)', article.read_text()):
            snippet = (REPO_ROOT / f"{path}.swift").read_text()
            assert f"// snippet.{slice_name}\n" in snippet, f"{article.name}: {path} has no slice {slice_name}"


@pytest.mark.skipif(os.environ.get("CARAVAN_TEST_DOCS") != "1" or ENGINE != "sqlite",
                    reason="building the documentation takes a minute or more: set CARAVAN_TEST_DOCS=1 to run scripts/docs")
def test_the_docs_command_runs():
    run = subprocess.run(["scripts/docs"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    archives = REPO_ROOT / ".build" / "docs"
    for target, article, code in [("CaravanCore", "writinganappmodule", "notes_own"),
                                  ("CaravanClient", "connectingandsyncing", "SyncFilter("),
                                  ("CaravanClient", "gettingstarted", "signInWithApple")]:
        page = archives / f"{target}.doccarchive" / "data" / "documentation" / target.lower() / f"{article}.json"
        assert code in page.read_text(), f"{page} does not show its snippets"


def test_readme_swift_code_is_compiled_snippet_code():
    # The slice markers (`// snippet.NAME`), which DocC does not show, are left out of the comparison.
    snippets = "\n".join(re.sub(r"^[ \t]*// snippet\.\w+\n", "", p.read_text(), flags=re.M)
                         for p in sorted((REPO_ROOT / "Snippets").glob("*.swift")))
    blocks = _blocks("swift")
    assert blocks, "README.md shows Swift code"
    for block in blocks:
        assert block in snippets, f"this README block is not word for word in Snippets/*.swift:\n{block}"


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but `-` and `_` dropped, spaces to `-`."""
    anchors = set()
    text = re.sub(r"^```.*?^```$", "", markdown, flags=re.S | re.M)
    for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchors.add(slug)
    return anchors


def test_relative_links_lead_somewhere():
    pages = [README, REPO_ROOT / "BENCHMARKS.md", *sorted((REPO_ROOT / "Docs").glob("*.md")),
             REPO_ROOT / "bench" / "history" / "README.md"]
    broken = []
    for page in pages:
        text = page.read_text()
        assert "../shared/docs" not in text, f"{page.name} refers to documents outside the repository"
        text = re.sub(r"^```.*?^```$", "", text, flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / unquote(path)).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.relative_to(REPO_ROOT)}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in _anchors(file.read_text()):
                broken.append(f"{page.relative_to(REPO_ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)

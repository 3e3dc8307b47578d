"""Docs/supabase-swift.md, the per-call compatibility table of supabase-swift, kept honest: it has one row per call
(155), each with a known status; every "works" row cites a test, and every test it cites (`file::test_name` in
Tests/conformance, `Suite.testName` in the Swift tests) exists; and the counts of its summary line, its summary
table and the README's "Supabase clients" table are the counts of its rows. Reads files only; no server."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from conftest import REPO_ROOT

TABLE = REPO_ROOT / "Docs" / "supabase-swift.md"
README = REPO_ROOT / "README.md"
AREAS = ["Auth", "Auth MFA", "Auth admin", "Database", "Realtime", "Storage", "Functions"]
KINDS = ["works", "partial", "not served", "pending"]
STATUSES = {"works", "partial", "not served", "pending (branch mfa)", "pending (branch image)"}
CALLS = 155

PYTHON_CITATION = re.compile(r"`(Tests/conformance/[\w/]+\.py)::(test_\w+)`")
SWIFT_CITATION = re.compile(r"`([A-Z]\w*Tests)\.([a-z]\w*)`")


def cells(line: str) -> list[str]:
    """The cells of a Markdown table row; `\\|` inside a cell is not a separator."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def call_rows() -> list[list[str]]:
    """The rows of the per-call tables: area, call, request, status, evidence."""
    return [row for line in TABLE.read_text().splitlines() if line.startswith("| ")
            for row in [cells(line)] if len(row) == 5 and row[0] in AREAS]


def kind(status: str) -> str:
    return status.split(" (")[0]


def counted() -> dict[str, Counter]:
    counts = {area: Counter() for area in AREAS}
    for area, _, _, status, _ in call_rows():
        counts[area][kind(status)] += 1
    return counts


def count_table(text: str) -> dict[str, list[int]]:
    """The rows `| Area | calls | works | partial | not served | pending |` of a counts table, by area."""
    table = {}
    for line in text.splitlines():
        row = cells(line) if line.startswith("| ") else []
        if len(row) == 6 and (row[0] in AREAS or row[0] == "Total") and all(c.isdigit() for c in row[1:]):
            table[row[0]] = [int(c) for c in row[1:]]
    return table


def expected_counts() -> dict[str, list[int]]:
    counts = counted()
    total = sum(counts.values(), Counter())
    return {area: [sum(c.values())] + [c[k] for k in KINDS] for area, c in [*counts.items(), ("Total", total)]}


def swift_tests() -> set[tuple[str, str]]:
    """(suite, test function) for every function of every top-level type in Tests/**/*.swift: a function belongs to
    the last type declared at the start of a line before it (`@Suite struct X`, `struct X`, `extension X`)."""
    found = set()
    declaration = re.compile(r"^(?:@Suite(?:\([^)]*\))?\s+)?(?:struct|final class|class|extension|enum)\s+(\w+)")
    for path in (REPO_ROOT / "Tests").rglob("*.swift"):
        suite = None
        for line in path.read_text().splitlines():
            if match := declaration.match(line):
                suite = match.group(1)
            elif suite and (match := re.search(r"\bfunc (\w+)\(", line)):
                found.add((suite, match.group(1)))
    return found


def python_tests(path: Path) -> set[str]:
    return set(re.findall(r"^(?:async )?def (test_\w+)\(", path.read_text(), flags=re.M))


def test_one_row_per_call_with_a_known_status():
    rows = call_rows()
    assert len(rows) == CALLS, f"{len(rows)} rows, not {CALLS}"
    calls = [(area, call) for area, call, *_ in rows]
    assert len(set(calls)) == len(calls), [c for c, n in Counter(calls).items() if n > 1]
    unknown = [(area, call, status) for area, call, _, status, _ in rows if status not in STATUSES]
    assert not unknown, unknown


def test_every_working_call_cites_a_test_and_every_cited_test_exists():
    swift = swift_tests()
    python: dict[str, set[str]] = {}
    uncited, missing = [], []
    for area, call, _, status, evidence in call_rows():
        citations = PYTHON_CITATION.findall(evidence) + SWIFT_CITATION.findall(evidence)
        if status == "works" and not citations:
            uncited.append((area, call))
        for file, name in PYTHON_CITATION.findall(evidence):
            path = REPO_ROOT / file
            if file not in python:
                python[file] = python_tests(path) if path.exists() else set()
            if name not in python[file]:
                missing.append(f"{file}::{name}")
        for suite, name in SWIFT_CITATION.findall(evidence):
            if (suite, name) not in swift:
                missing.append(f"{suite}.{name}")
    assert not uncited, f"works without a test: {uncited}"
    assert not missing, f"cited tests that do not exist: {sorted(set(missing))}"


def test_the_summaries_and_the_readme_count_the_rows():
    expected = expected_counts()
    text = TABLE.read_text()
    assert count_table(text) == expected
    summary = re.search(r"^\*\*(\d+) of (\d+) calls work\*\*: (.+)\.$", text, flags=re.M)
    assert summary, "no summary line `**N of 155 calls work**: …` in Docs/supabase-swift.md"
    assert (int(summary.group(1)), int(summary.group(2))) == (expected["Total"][1], CALLS)
    per_area = {area: [int(works), int(calls)] for area, works, calls in re.findall(r"(Auth(?: MFA| admin)?|\w+) (\d+) of (\d+)", summary.group(3))}
    assert per_area == {area: [expected[area][1], expected[area][0]] for area in AREAS}
    section = re.search(r"^## Supabase clients\n(.*?)(?=^## )", README.read_text(), flags=re.S | re.M)
    assert section, "no `## Supabase clients` section in README.md"
    assert "(Docs/supabase-swift.md)" in section.group(1)
    sentence = re.search(r"(\d+) of supabase-swift [\d.]+'s (\d+) public calls work", section.group(1))
    assert sentence and (int(sentence.group(1)), int(sentence.group(2))) == (expected["Total"][1], CALLS)
    assert count_table(section.group(1)) == expected

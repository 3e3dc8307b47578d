"""The convergence checker (Tests/convergence/checker.py) on synthetic histories: a clean one passes, and a lost
acknowledged write, a duplicate application, a rejected write that was applied, a stale replica, a backwards read, a
read missing an own write and a stuck outbox are each reported."""
from __future__ import annotations

import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "convergence"))

from checker import check, key_text  # noqa: E402

A = "11111111-1111-1111-1111-111111111111"
B = "22222222-2222-2222-2222-222222222222"
USER = "99999999-9999-9999-9999-999999999999"


def clean() -> dict:
    """One client: inserts A and B, updates A, deletes B, tries one write the server rejects."""
    mutations = [
        {"id": "m1", "table": "favorites", "op": "insert", "key": {"id": A}, "record": {"id": A, "user_id": USER, "place_id": "p1", "note": "one"}},
        {"id": "m2", "table": "favorites", "op": "insert", "key": {"id": B}, "record": {"id": B, "user_id": USER, "place_id": "p2", "note": "two"}},
        {"id": "m3", "table": "favorites", "op": "update", "key": {"id": A}, "record": {"note": "one again"}},
        {"id": "m4", "table": "favorites", "op": "delete", "key": {"id": B}, "record": None},
        {"id": "m5", "table": "favorites", "op": "insert", "key": {"id": "33333333-3333-3333-3333-333333333333"},
         "record": {"user_id": "someone else", "place_id": "p3"}},
    ]
    row_a = {"id": A, "user_id": USER, "place_id": "p1", "note": "one again", "created_at": "2026-11-28T11:00:00Z"}
    return {
        "keys": {"favorites": ["id"]},
        "single_writer": ["favorites"],
        "verdicts": {"m1": {"status": "applied", "seq": 10}, "m2": {"status": "applied", "seq": 11}, "m3": {"status": "applied", "seq": 12},
                     "m4": {"status": "applied", "seq": 13}, "m5": {"status": "rejected", "seq": None}},
        "server": {"favorites": [dict(row_a)]},
        "changes": {"favorites": {key_text({"id": A}): [10, 12], key_text({"id": B}): [11, 13]}},
        "clients": [{
            "name": "c0", "user_id": USER, "mutations": mutations, "parked": ["m5"], "pending": [],
            "positions": [0, 11, 11, 13],
            "reads": [{"after": 2, "table": "favorites", "rows": [
                {"id": A, "user_id": USER, "place_id": "p1", "note": "one"}, {"id": B, "user_id": USER, "place_id": "p2", "note": "two"}]},
                {"after": 5, "table": "favorites", "rows": [dict(row_a)]}],
            "local": {"favorites": [dict(row_a)]}, "rest": {"favorites": [dict(row_a)]},
            "drain": {"drained": True, "seconds": 1.5, "bound": 60},
        }],
    }


def kinds(history: dict) -> list[str]:
    return sorted({v["kind"] for v in check(history)})


def test_a_clean_history_is_clean():
    assert check(clean()) == []


def test_a_lost_acknowledged_write():
    h = clean()
    h["server"]["favorites"][0]["note"] = "one"          # the update m3 never landed
    h["clients"][0]["rest"]["favorites"][0]["note"] = "one"
    h["clients"][0]["local"]["favorites"][0]["note"] = "one"
    assert "lost-write" in kinds(h)
    h = clean()
    del h["verdicts"]["m3"]                                # left the outbox, never reached the server
    assert "lost-write" in kinds(h)
    h = clean()
    h["changes"]["favorites"][key_text({"id": A})] = [10]  # acknowledged as applied, never logged nor visible
    h["server"]["favorites"][0]["note"] = "one"
    h["clients"][0]["rest"]["favorites"][0]["note"] = "one"
    h["clients"][0]["local"]["favorites"][0]["note"] = "one"
    assert kinds(h) == ["lost-write"]


def test_a_duplicate_application():
    h = clean()
    h["changes"]["favorites"][key_text({"id": A})] = [10, 12, 14]   # the update applied twice
    assert kinds(h) == ["duplicate"]
    h = clean()
    # The insert of B replayed after its delete: B is back.
    row_b = {"id": B, "user_id": USER, "place_id": "p2", "note": "two"}
    h["server"]["favorites"].append(row_b)
    h["changes"]["favorites"][key_text({"id": B})] = [11, 13, 15]
    assert {"duplicate", "unexpected-row"} <= set(kinds(h))


def test_a_rejected_write_that_is_not_parked_or_was_applied():
    h = clean()
    h["clients"][0]["parked"] = []
    assert kinds(h) == ["rejected-applied"]
    h = clean()
    h["verdicts"]["m5"] = {"status": "applied", "seq": 14}
    assert "rejected-applied" in kinds(h)


def test_a_stale_replica():
    h = clean()
    h["clients"][0]["local"]["favorites"][0]["note"] = "old"
    found = check(h)
    assert [v["kind"] for v in found] == ["stale-replica"] and "note" in found[0]["detail"]
    h = clean()
    h["clients"][0]["local"]["favorites"].append({"id": B, "user_id": USER, "place_id": "p2", "note": "two"})
    assert kinds(h) == ["stale-replica"]


def test_a_backwards_read():
    h = clean()
    h["clients"][0]["positions"] = [0, 13, 11]
    assert kinds(h) == ["backwards-read"]


def test_a_read_that_loses_an_own_write():
    h = clean()
    h["clients"][0]["reads"][0]["rows"] = h["clients"][0]["reads"][0]["rows"][:1]
    assert kinds(h) == ["read-your-writes"]


def test_a_stuck_outbox():
    h = clean()
    h["clients"][0]["pending"] = ["m5"]
    h["clients"][0]["parked"] = []
    h["verdicts"].pop("m5")
    assert kinds(h) == ["stuck-outbox"]
    h = clean()
    h["clients"][0]["drain"] = {"drained": True, "seconds": 90, "bound": 60}
    assert kinds(h) == ["stuck-outbox"]

"""The convergence checker (Tests/convergence/checker.py) on synthetic histories: a clean one passes, and a lost
acknowledged write, a duplicate application, a rejected write that was applied, a stale replica, a backwards read, a
read missing an own write, a stuck outbox, a transaction seen half-applied, a locally refused write queued all the
same, a realtime change received twice and one neither received nor pulled are each reported; a column the server
stamps is not held against a write that left it to the server."""
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
        {"id": "m1", "table": "favorites", "op": "insert", "key": {"id": A},
         "record": {"id": A, "user_id": USER, "place_id": "p1", "note": "one", "updated_at": "2026-11-28T10:00:00Z"}},
        {"id": "m2", "table": "favorites", "op": "insert", "key": {"id": B}, "record": {"id": B, "user_id": USER, "place_id": "p2", "note": "two"}},
        {"id": "m3", "table": "favorites", "op": "update", "key": {"id": A}, "record": {"note": "one again"}},
        {"id": "m4", "table": "favorites", "op": "delete", "key": {"id": B}, "record": None},
        {"id": "m5", "table": "favorites", "op": "insert", "key": {"id": "33333333-3333-3333-3333-333333333333"},
         "record": {"user_id": "someone else", "place_id": "p3"}},
    ]
    # updated_at: taken on the device by the insert, stamped by the server at the update (which left it out).
    row_a = {"id": A, "user_id": USER, "place_id": "p1", "note": "one again", "created_at": "2026-11-28T11:00:00Z", "updated_at": "2026-11-28T11:05:00Z"}
    return {
        "keys": {"favorites": ["id"]},
        "single_writer": ["favorites"],
        "stamped": {"favorites": ["updated_at"]},
        "transactions": [[14, 15]],                       # an RPC's two rows, logged after the client's last pull
        "realtime_tables": ["favorites"],
        "verdicts": {"m1": {"status": "applied", "seq": 10}, "m2": {"status": "applied", "seq": 11}, "m3": {"status": "applied", "seq": 12},
                     "m4": {"status": "applied", "seq": 13}, "m5": {"status": "rejected", "seq": None}},
        "server": {"favorites": [dict(row_a)]},
        "changes": {"favorites": {key_text({"id": A}): [10, 12], key_text({"id": B}): [11, 13]}},
        "clients": [{
            "name": "c0", "user_id": USER, "mutations": mutations, "parked": ["m5"], "pending": [],
            "positions": [0, 11, 11, 13],
            "reads": [{"after": 2, "table": "favorites", "rows": [
                {"id": A, "user_id": USER, "place_id": "p1", "note": "one", "updated_at": "2026-11-28T10:00:00Z"},
                {"id": B, "user_id": USER, "place_id": "p2", "note": "two"}]},
                {"after": 5, "table": "favorites", "rows": [dict(row_a)]}],
            "local": {"favorites": [dict(row_a)]}, "rest": {"favorites": [dict(row_a)]},
            "drain": {"drained": True, "seconds": 1.5, "bound": 60},
            "refused_locally": [{"table": "favorites", "op": "insert", "record": {"place_id": ""}, "code": "checkViolation", "queued": []}],
            "realtime": [{"table": "favorites", "key": {"id": A}, "seq": 10, "type": "INSERT"},
                         {"table": "favorites", "key": {"id": B}, "seq": 11, "type": "INSERT"},
                         {"table": "favorites", "key": {"id": A}, "seq": 12, "type": "UPDATE"}],
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
    assert kinds(h) == ["duplicate", "realtime-missed"]              # (its second entry neither pushed live nor pulled)
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


def test_a_stamped_column_is_the_servers_unless_the_write_gives_it():
    h = clean()
    del h["stamped"]                                      # without knowing the server stamps updated_at
    assert kinds(h) == ["lost-write", "read-your-writes"]
    h = clean()
    h["clients"][0]["mutations"][2]["record"]["updated_at"] = "2026-11-28T11:04:00Z"   # given by the update: kept
    assert kinds(h) == ["lost-write", "read-your-writes"]
    h["server"]["favorites"][0]["updated_at"] = "2026-11-28T11:04:00Z"
    for view in ("local", "rest"):
        h["clients"][0][view]["favorites"][0]["updated_at"] = "2026-11-28T11:04:00Z"
    h["clients"][0]["reads"][1]["rows"][0]["updated_at"] = "2026-11-28T11:04:00Z"
    assert check(h) == []


def test_a_transaction_seen_half_applied():
    h = clean()
    h["transactions"] = [[12, 14]]                        # the client pulled through 13: one row of it, not the other
    found = check(h)
    assert [v["kind"] for v in found] == ["half-applied"] and "[12]" in found[0]["detail"]
    h["transactions"] = [[11, 13]]                        # pulled through 11 and 13: through its end, then whole
    h["clients"][0]["positions"] = [0, 13]
    assert check(h) == []


def test_a_locally_refused_write_that_was_queued():
    h = clean()
    h["clients"][0]["refused_locally"][0]["queued"] = ["m6"]
    assert kinds(h) == ["refused-applied"]


def test_a_realtime_change_received_twice():
    h = clean()
    h["clients"][0]["realtime"].append({"table": "favorites", "key": {"id": A}, "seq": 12, "type": "UPDATE"})
    found = check(h)
    assert [v["kind"] for v in found] == ["realtime-duplicate"] and "12" in found[0]["detail"]


def test_a_realtime_change_neither_received_nor_pulled():
    h = clean()
    h["clients"][0]["realtime"] = h["clients"][0]["realtime"][:2]     # the update of A (seq 12) never came live
    assert check(h) == [], "the pull through 13 that followed covers it"
    h["clients"][0]["positions"] = [0, 11]
    found = check(h)
    assert [v["kind"] for v in found] == ["realtime-missed"] and "12" in found[0]["detail"]

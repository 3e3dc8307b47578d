"""The convergence checker: reads one history of a run (what every client wrote, what its outbox and store showed,
what the server holds at the end) and lists every violation of the offline-first contract.

A history is a plain dict (JSON in the harness's output directory):

    {"clients": [{"name": "c0", "user_id": "…",
                  "mutations": [{"id", "table", "op", "key": {…}, "record": {…}|null}, …],   # local-write order
                  "parked": [ids], "pending": [ids],          # the outbox after the heal
                  "positions": [int, …],                      # the pull cursor's position after each sync, in order
                  "reads": [{"after": k, "table": t, "rows": [...]}],   # local rows read when the outbox was empty,
                                                              # after the client's first k mutations
                  "local": {table: rows}, "rest": {table: rows},          # after the heal
                  "drain": {"drained": bool, "seconds": s, "bound": b},
                  "refused_locally": [{"table", "op", "record", "code", "queued": [ids]}],   # writes the device
                                                              # refused at once, and what the refusing command queued
                  "realtime": [{"table", "key": {…}, "seq"}]},  # postgres_changes events its subscriber received
                  …],
     "verdicts": {mutation_id: {"status": "applied"|"rejected", "seq": int|null}},   # the server's verdict table
     "server": {table: rows},                 # the model tables as the service role reads them
     "changes": {table: {key_text: [seq, …]}},   # the change-log entries of each row of the model tables
     "keys": {table: [primary key columns]},
     "single_writer": [tables],               # tables whose rows only their owner's client writes
     "untracked": {table: [key_text]},        # rows also written outside the outboxes (setup, RPCs): not modelled
     "stamped": {table: [columns]},           # columns the server sets on every write that does not give them
     "transactions": [[seq, …], …],           # the change-log entries (synced tables) of each multi-row transaction
     "realtime_tables": [tables]}             # the tables the realtime subscribers listened to

Checks (each violation is a dict with `kind`, `client` when it concerns one, and `detail`):
  lost-write            an acknowledged mutation the server does not reflect (no verdict, a value or row missing, an
                        applied write to an owned row the change log never recorded)
  duplicate             a mutation applied more than once (change-log entries of a row that no applied mutation's
                        checkpoint accounts for)
  rejected-applied      a rejected mutation that is not parked on its client, or an applied one that is parked
  unexpected-row        a server row of a model table that no applied mutation explains
  stale-replica         a client's local table differs from its user's REST view (per row, per column)
  read-your-writes      a local read, taken with an empty outbox, missing or contradicting the client's own
                        applied writes
  backwards-read        the pull cursor's position went back
  stuck-outbox          the outbox did not drain after the heal within the bound
  half-applied          a client's pull position fell inside a transaction: it saw some of its rows and not the rest
  refused-applied       a write the device refused at once that its outbox queued all the same
  realtime-duplicate    a subscriber received one change (table, key, seq) more than once
  realtime-missed       a change of a row its user sees that the subscriber never received and no pull covered
"""
from __future__ import annotations

import json
from typing import Any


def key_text(key: dict[str, Any]) -> str:
    return json.dumps({k: normalize(v) for k, v in sorted(key.items())}, sort_keys=True)


def normalize(value: Any) -> Any:
    """Values as both sides should agree on them: numbers by value, uuids and text as given, arrays and objects deep."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list):
        return [normalize(v) for v in value]
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in sorted(value.items())}
    if isinstance(value, str) and len(value) == 36 and value.count("-") == 4:
        return value.lower()
    return value


def row_key(row: dict[str, Any], columns: list[str]) -> str:
    return key_text({c: row.get(c) for c in columns})


class Model:
    """The rows a sequence of applied mutations leaves, and how many of them changed something."""

    def __init__(self, stamped: list[str] | None = None) -> None:
        self.stamped = stamped or []
        self.rows: dict[str, dict[str, Any]] = {}
        self.effective: dict[str, int] = {}
        self.last: dict[str, str] = {}

    def would_change(self, mutation: dict[str, Any]) -> bool:
        exists = key_text(mutation["key"]) in self.rows
        return mutation["op"] == "upsert" or exists == (mutation["op"] != "insert")

    def apply(self, mutation: dict[str, Any], logged: bool = False) -> None:
        """Applies `mutation`; `logged` (the change log holds its checkpoint) applies it even where the model
        thought the row absent."""
        k = key_text(mutation["key"])
        op = mutation["op"]
        record = mutation.get("record") or {}
        exists = k in self.rows or logged
        changed = False
        if op == "insert":
            if k not in self.rows:
                self.rows[k] = {**mutation["key"], **record}
                changed = True
        elif op == "upsert":
            self.rows[k] = {**self.unstamped(self.rows.get(k, {}), record), **mutation["key"], **record}
            changed = True
        elif op == "update":
            if exists:
                self.rows[k] = {**self.unstamped(self.rows.get(k, {}), record), **mutation["key"], **record}
                changed = True
        elif op == "delete":
            if exists:
                self.rows.pop(k, None)
                changed = True
        if changed:
            self.effective[k] = self.effective.get(k, 0) + 1
        self.last[k] = mutation["id"]


    def unstamped(self, row: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
        """`row` without the stamped columns a write that does not give them leaves to the server (its own time)."""
        return {c: v for c, v in row.items() if c not in self.stamped or c in record}


def compare_rows(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """The columns of `expected` whose value differs in `actual`."""
    return [c for c, v in expected.items() if normalize(v) != normalize(actual.get(c))]


def check(history: dict[str, Any]) -> list[dict[str, Any]]:
    violations: list[dict[str, Any]] = []
    transactions = [sorted(t) for t in history.get("transactions", []) if len(t) > 1]
    verdicts: dict[str, dict[str, Any]] = history.get("verdicts", {})
    keys: dict[str, list[str]] = history.get("keys", {})
    single_writer = set(history.get("single_writer", []))
    untracked = {t: set(ks) for t, ks in history.get("untracked", {}).items()}
    stamped: dict[str, list[str]] = history.get("stamped", {})

    def add(kind: str, detail: str, client: str | None = None) -> None:
        violations.append({"kind": kind, **({"client": client} if client else {}), "detail": detail})

    # Verdicts against each client's outbox.
    for client in history.get("clients", []):
        name = client["name"]
        parked, pending = set(client.get("parked", [])), set(client.get("pending", []))
        for m in client.get("mutations", []):
            verdict = verdicts.get(m["id"])
            if verdict is None:
                if m["id"] not in pending:
                    add("lost-write", f"mutation {m['id']} ({m['op']} {m['table']} {key_text(m['key'])}) left the outbox with no verdict on the server", name)
            elif verdict["status"] == "rejected" and m["id"] not in parked:
                add("rejected-applied", f"mutation {m['id']} was rejected by the server but is not parked on the client", name)
            elif verdict["status"] == "applied" and m["id"] in parked:
                add("rejected-applied", f"mutation {m['id']} is parked on the client but the server applied it", name)

    # The server's rows of each model table against every applied mutation folded in server order.
    for table, server_rows in history.get("server", {}).items():
        columns = keys[table]
        applied = [m for c in history.get("clients", []) for m in c.get("mutations", [])
                   if m["table"] == table and verdicts.get(m["id"], {}).get("status") == "applied"]
        applied.sort(key=lambda m: verdicts[m["id"]].get("seq") or 0)
        logged: dict[str, list[int]] | None = history.get("changes", {}).get(table)
        skip = untracked.get(table, set())
        model = Model(stamped.get(table))
        explained: dict[str, int] = {}
        for m in applied:
            k = key_text(m["key"])
            if logged is None:
                model.apply(m)
            elif verdicts[m["id"]].get("seq") in logged.get(k, []):
                model.apply(m, logged=True)
                explained[k] = explained.get(k, 0) + 1
            elif table in single_writer and model.would_change(m) and k not in skip:
                # An owned row: nothing but its owner's mutation can hide it, so an applied write changes it.
                add("lost-write", f"{table} {k}: mutation {m['id']} applied (seq {verdicts[m['id']].get('seq')}) but the change log has no entry for it")
                model.last[k] = m["id"]
            else:
                model.last[k] = m["id"]   # applied without effect: a row gone, or hidden from the writer by policy
        actual = {row_key(r, columns): r for r in server_rows}
        for k, expected in model.rows.items():
            if k in skip:
                continue
            if k not in actual:
                add("lost-write", f"{table} {k}: written by applied mutation {model.last[k]} but absent on the server")
            elif wrong := compare_rows(expected, actual[k]):
                add("lost-write", f"{table} {k}: columns {wrong} differ from the last applied write {model.last[k]}")
        for k in actual:
            if k not in model.rows and k not in skip:
                cause = f" (last mutation {model.last[k]})" if k in model.last else ""
                add("unexpected-row", f"{table} {k}: on the server but no applied mutation leaves it there{cause}")
        for k, seqs in (logged or {}).items():
            if k not in skip and len(seqs) > explained.get(k, 0):
                add("duplicate", f"{table} {k}: {len(seqs)} change-log entries, {explained.get(k, 0)} of them checkpoints of applied mutations")

    for client in history.get("clients", []):
        name = client["name"]
        # Local replica against the user's REST view.
        for table, rest_rows in client.get("rest", {}).items():
            columns = keys.get(table, ["id"])
            local = {row_key(r, columns): r for r in client.get("local", {}).get(table, [])}
            remote = {row_key(r, columns): r for r in rest_rows}
            for k in remote.keys() - local.keys():
                add("stale-replica", f"{table} {k}: visible over REST, absent locally", name)
            for k in local.keys() - remote.keys():
                add("stale-replica", f"{table} {k}: local, not visible over REST", name)
            for k in local.keys() & remote.keys():
                columns_differing = sorted(set(local[k]) | set(remote[k]))
                wrong = [c for c in columns_differing if normalize(local[k].get(c)) != normalize(remote[k].get(c))]
                if wrong:
                    add("stale-replica", f"{table} {k}: columns {wrong} differ (local {[local[k].get(c) for c in wrong]}, REST {[remote[k].get(c) for c in wrong]})", name)
        # Monotonic reads: the cursor's position never goes back.
        positions = client.get("positions", [])
        for before, after in zip(positions, positions[1:]):
            if after < before:
                add("backwards-read", f"the pull position went from {before} back to {after}", name)
        # Read-your-writes on single-writer tables: a read with an empty outbox shows the client's own applied writes.
        for read in client.get("reads", []):
            table = read["table"]
            if table not in single_writer:
                continue
            columns = keys[table]
            model = Model(stamped.get(table))
            for m in client.get("mutations", [])[: read["after"]]:
                if m["table"] == table and verdicts.get(m["id"], {}).get("status") == "applied":
                    model.apply(m)
            seen = {row_key(r, columns): r for r in read["rows"]}
            for k, expected in model.rows.items():
                if k not in seen:
                    add("read-your-writes", f"{table} {k}: own applied write {model.last[k]} missing from a local read after {read['after']} writes", name)
                elif wrong := compare_rows(expected, seen[k]):
                    add("read-your-writes", f"{table} {k}: columns {wrong} of a local read contradict own applied write {model.last[k]}", name)
            for k in seen.keys() - model.rows.keys():
                if k in model.last:
                    add("read-your-writes", f"{table} {k}: a local read shows a row the client's applied writes removed", name)
        # No stuck outbox.
        drain = client.get("drain", {})
        if client.get("pending"):
            add("stuck-outbox", f"{len(client['pending'])} mutations still pending after the heal", name)
        elif drain and (not drain.get("drained") or drain.get("seconds", 0) > drain.get("bound", float("inf"))):
            add("stuck-outbox", f"the outbox drained in {drain.get('seconds')} s, over the bound of {drain.get('bound')} s", name)
        # Transactions never seen half-applied: a pull position (everything up to it seen, nothing after) never
        # falls between the first and the last change-log entry of one transaction.
        for position in sorted(set(positions)):
            for entries in transactions:
                if entries[0] <= position < entries[-1]:
                    add("half-applied", f"pulled through {position}: saw entries {[e for e in entries if e <= position]} of a transaction, "
                        f"not {[e for e in entries if e > position]}", name)
        # A write refused on the device is queued for no one: the command that refused it added nothing to the outbox.
        for refused in client.get("refused_locally", []):
            if refused.get("queued"):
                add("refused-applied", f"{refused['op']} {refused['table']} refused on the device ({refused.get('code')}) yet queued as {refused['queued']}", name)
        # Realtime: each change at most once, and every change of a row the user sees either received live or covered
        # by a pull that followed it (a pull position at or after its entry).
        if "realtime" in client:
            received: dict[tuple[str, str, int], int] = {}
            for event in client["realtime"]:
                ident = (event["table"], key_text(event["key"]), event["seq"])
                received[ident] = received.get(ident, 0) + 1
            for (table, k, seq), times in sorted(received.items()):
                if times > 1:
                    add("realtime-duplicate", f"{table} {k}: change {seq} received {times} times", name)
            pulled = max(positions, default=0)
            for table in history.get("realtime_tables", []):
                columns = keys.get(table, ["id"])
                logged = history.get("changes", {}).get(table, {})
                for row in client.get("rest", {}).get(table, []):
                    k = row_key(row, columns)
                    for seq in logged.get(k, []):
                        if (table, k, seq) not in received and seq > pulled:
                            add("realtime-missed", f"{table} {k}: change {seq} neither received live nor pulled (pulled through {pulled})", name)
    return violations

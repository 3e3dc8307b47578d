#!/usr/bin/env python3
"""Tally of 10,000 ranked ballots over 20 candidates: `caravan decisions tally` (the code the RPCs run) against a
plain Python instant-runoff with the same tie-break, same input, same run. Prints medians of N runs as JSON.

Usage: bench/decisions_tally_bench.py CARAVAN_BIN [runs=5] [ballots=10000] [candidates=20] [seed=19]
"""
import json
import random
import statistics
import subprocess
import sys
import time


def election(ballots: int, candidates: int, seed: int) -> dict:
    rng = random.Random(seed)
    ids = [f"{i:08x}-0000-4000-8000-{rng.getrandbits(48):012x}" for i in range(candidates)]
    popularity = [rng.random() + 0.2 for _ in ids]  # uneven support, so rounds are not trivially tied
    out = []
    for _ in range(ballots):
        order = sorted(ids, key=lambda c: -popularity[ids.index(c)] * rng.random())
        out.append(order[: rng.randint(1, candidates)])
    return {"candidates": ids, "ballots": out}


def python_tally(candidates, ballots):
    firsts, borda = {c: 0 for c in candidates}, {c: 0 for c in candidates}
    for b in ballots:
        if b:
            firsts[b[0]] += 1
        for p, c in enumerate(b):
            borda[c] += len(b) - p
    standing = set(candidates)
    while True:
        counts = {c: 0 for c in standing}
        for b in ballots:
            for c in b:
                if c in standing:
                    counts[c] += 1
                    break
        total = sum(counts.values())
        leader = max(counts, key=counts.get)
        if counts[leader] * 2 > total or len(standing) == 1:
            return leader
        low = min(counts.values())
        out = sorted((c for c in standing if counts[c] == low), key=lambda c: (firsts[c], borda[c], [-ord(x) for x in c]))[0]
        standing.remove(out)


def main():
    binary = sys.argv[1]
    runs, ballots, candidates, seed = (int(a) for a in (sys.argv[2:] + ["5", "10000", "20", "19"][len(sys.argv) - 2:])[:4])
    doc = election(ballots, candidates, seed)
    text = json.dumps(doc)
    caravan, reference, winner = [], [], None
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([binary, "decisions", "tally"], input=text, capture_output=True, text=True, check=True)
        caravan.append(time.perf_counter() - start)
        winner = json.loads(done.stdout)["winner"]
        start = time.perf_counter()
        expected = python_tally(doc["candidates"], doc["ballots"])
        reference.append(time.perf_counter() - start)
        assert expected == winner, (expected, winner)
    print(json.dumps({
        "ballots": ballots, "candidates": candidates, "seed": seed, "runs": runs, "input_bytes": len(text),
        "caravan_process_s": [round(x, 4) for x in caravan], "caravan_median_s": round(statistics.median(caravan), 4),
        "python_reference_s": [round(x, 4) for x in reference], "python_median_s": round(statistics.median(reference), 4),
        "winner": winner, "rounds": len(json.loads(done.stdout)["rounds"]),
    }, indent=1))


if __name__ == "__main__":
    main()

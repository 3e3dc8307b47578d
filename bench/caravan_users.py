#!/usr/bin/env python3
"""Create benchmark users in a Caravan data dir (server stopped) and write their access tokens.

    .venv/bin/python bench/caravan_users.py --data-dir D --users N --out USERS_FILE [--places-out PLACES_FILE]

Inserts N rows into `users` (there is no REST endpoint for users yet), straight into D/caravan.sqlite, and signs
for each an HS256 access token like a Supabase one — header {"alg":"HS256","typ":"JWT","kid":"caravan"}, claims
{"sub": <id>, "role": "authenticated", "exp": now + 1 day, "app_metadata": {}} — with the deployment's secret
(D/jwt_secret.json, base64 of the key bytes; `caravan keys` creates it). Writes "<id>\t<token>" lines, and, with
--places-out, every places.id (rowid order). Needs PyJWT (/work/main/.venv).
"""
import argparse
import base64
import json
import os
import sqlite3
import time
import uuid

import jwt


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--out", required=True)
    parser.add_argument("--places-out")
    args = parser.parse_args()

    with open(os.path.join(args.data_dir, "jwt_secret.json")) as f:
        secret = base64.b64decode(json.load(f)["secret"])
    db = sqlite3.connect(os.path.join(args.data_dir, "caravan.sqlite"))
    # Deterministic ids, so reruns are comparable.
    ids = [str(uuid.UUID(int=(0xB0 << 120) | (0x4000 << 64) | (0x8 << 60) | n)) for n in range(1, args.users + 1)]
    with db:
        # The accounts (favorites reference auth_users); the deployment's `users` profiles are not needed here.
        db.executemany("INSERT INTO auth_users (id) VALUES (?)", [(i,) for i in ids])
    exp = int(time.time()) + 86400
    with open(args.out, "w") as f:
        for i in ids:
            token = jwt.encode({"sub": i, "role": "authenticated", "exp": exp, "app_metadata": {}}, secret,
                               algorithm="HS256", headers={"kid": "caravan"})
            f.write(f"{i}\t{token}\n")
    if args.places_out:
        with open(args.places_out, "w") as f:
            for (place_id,) in db.execute("SELECT id FROM places ORDER BY rowid"):
                f.write(place_id + "\n")
    db.close()
    print(json.dumps({"users": len(ids), "first": ids[0]}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Create the `favorites` collection and N users in a running PocketBase, and write the users' auth tokens.

    python3 bench/pb_write_setup.py --url http://127.0.0.1:PORT --email E --password P --users N --out USERS_FILE

The superuser must exist (`pocketbase superuser upsert E P --dir DIR`). The collection mirrors Caravan's
`favorites` policy `user_id = auth.uid()`:
  fields      user (relation to the built-in `users` auth collection, one record, required), place (text, required)
  createRule  @request.auth.id != "" && user = @request.auth.id
  list/view   user = @request.auth.id          (update/delete: superusers only)
  index       UNIQUE (user, place)
Users are created through the API (POST /api/collections/users/records) and signed in with
/api/collections/users/auth-with-password; writes "<record id>\t<token>" lines. Also prints the settings that
matter for a write benchmark (rate limiter, batch API). Standard library only; reuses pb_setup's request helper.
"""
import argparse
import http.client
import json
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pb_setup import request  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--email", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    url = urllib.parse.urlparse(args.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)

    token = request(conn, "POST", "/api/collections/_superusers/auth-with-password",
                    {"identity": args.email, "password": args.password})["token"]
    settings = request(conn, "GET", "/api/settings", token=token)
    print("pocketbase settings:", json.dumps({"rateLimits.enabled": settings["rateLimits"]["enabled"],
                                              "batch.enabled": settings["batch"]["enabled"]}))
    users_collection = request(conn, "GET", "/api/collections/users", token=token)
    request(conn, "POST", "/api/collections", {
        "name": "favorites", "type": "base",
        "listRule": "user = @request.auth.id", "viewRule": "user = @request.auth.id",
        "createRule": '@request.auth.id != "" && user = @request.auth.id', "updateRule": None, "deleteRule": None,
        "fields": [
            {"name": "user", "type": "relation", "collectionId": users_collection["id"], "maxSelect": 1,
             "required": True, "cascadeDelete": True},
            {"name": "place", "type": "text", "required": True},
        ],
        "indexes": ["CREATE UNIQUE INDEX idx_favorites_user_place ON favorites (user, place)"],
    }, token)

    password = "bench-user-password-123"
    with open(args.out, "w") as f:
        for n in range(1, args.users + 1):
            email = f"user{n}@example.com"
            request(conn, "POST", "/api/collections/users/records",
                    {"email": email, "password": password, "passwordConfirm": password}, token)
            auth = request(conn, "POST", "/api/collections/users/auth-with-password",
                           {"identity": email, "password": password})
            f.write(f"{auth['record']['id']}\t{auth['token']}\n")
    print(json.dumps({"users": args.users}))


if __name__ == "__main__":
    main()

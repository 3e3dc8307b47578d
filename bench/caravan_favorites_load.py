#!/usr/bin/env python3
"""Load favorites into a running Caravan through the API, each user inserting its own rows with its own token.

    python3 bench/caravan_favorites_load.py --url http://127.0.0.1:PORT --anon-key K --users USERS_FILE \
        --places PLACES_FILE [--count-users 20] [--per-user 100]

USERS_FILE has "<id>\t<token>" lines (bench/caravan_users.py), PLACES_FILE one place id a line. User n gets the
places n*per-user … (n+1)*per-user-1 — distinct pairs. Every response must be 201. Standard library only.
"""
import argparse
import http.client
import json
import sys
import time
import urllib.parse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--anon-key", required=True)
    parser.add_argument("--users", required=True)
    parser.add_argument("--places", required=True)
    parser.add_argument("--count-users", type=int, default=20)
    parser.add_argument("--per-user", type=int, default=100)
    args = parser.parse_args()
    users = [line.rstrip("\n").split("\t") for line in open(args.users) if line.strip()][:args.count_users]
    places = [line.strip() for line in open(args.places) if line.strip()]
    url = urllib.parse.urlparse(args.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    start = time.perf_counter()
    for n, (user, token) in enumerate(users):
        headers = {"apikey": args.anon_key, "Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        for place in places[n * args.per_user:(n + 1) * args.per_user]:
            conn.request("POST", "/rest/v1/favorites", json.dumps({"user_id": user, "place_id": place}), headers)
            response = conn.getresponse()
            body = response.read()
            if response.status != 201:
                sys.exit(f"POST favorites -> {response.status}: {body[:300]!r}")
    print(json.dumps({"favorites_loaded": len(users) * args.per_user, "users": len(users),
                      "seconds": round(time.perf_counter() - start, 2)}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Users and sessions for the auth benchmarks (bench/auth_bench.sh). Standard library only.

    auth_users.py caravan-users URL APIKEY SERVICE_KEY N OUT      # N confirmed users via the admin API
    auth_users.py caravan-sessions URL APIKEY N OUT               # N anonymous sessions; writes their refresh tokens
    auth_users.py pocketbase-users URL EMAIL PASSWORD N COST OUT  # bcrypt cost COST on `users`, then N users
Writes "email<TAB>password" lines for users (all share one password).
"""
import concurrent.futures
import http.client
import json
import sys
import urllib.parse

PASSWORD = "bench-password-123"


def call(url, method, path, body=None, headers=None):
    parsed = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
    conn.request(method, path, None if body is None else json.dumps(body), {"Content-Type": "application/json", **(headers or {})})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    if response.status >= 300:
        sys.exit(f"{method} {path} -> {response.status}: {data[:300]!r}")
    return json.loads(data) if data else None


def parallel(function, items):
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        return list(pool.map(function, items))


def main():
    kind = sys.argv[1]
    if kind == "caravan-users":
        url, apikey, service, n, out = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
        headers = {"apikey": apikey, "Authorization": f"Bearer {service}"}
        emails = [f"bench{i}@example.com" for i in range(n)]
        parallel(lambda e: call(url, "POST", "/auth/v1/admin/users", {"email": e, "password": PASSWORD, "email_confirm": True}, headers), emails)
        open(out, "w").write("".join(f"{e}\t{PASSWORD}\n" for e in emails))
    elif kind == "caravan-sessions":
        url, apikey, n, out = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
        sessions = parallel(lambda _: call(url, "POST", "/auth/v1/signup", {}, {"apikey": apikey}), range(n))
        open(out, "w").write("".join(s["refresh_token"] + "\n" for s in sessions))
    elif kind == "pocketbase-users":
        url, email, password, n, cost, out = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
        token = call(url, "POST", "/api/collections/_superusers/auth-with-password", {"identity": email, "password": password})["token"]
        auth = {"Authorization": token}
        collection = call(url, "GET", "/api/collections/users", headers=auth)
        for field in collection["fields"]:
            if field["type"] == "password":
                field["cost"] = cost
        call(url, "PATCH", "/api/collections/users", {"fields": collection["fields"]}, auth)
        emails = [f"bench{i}@example.com" for i in range(n)]
        parallel(lambda e: call(url, "POST", "/api/collections/users/records",
                                {"email": e, "password": PASSWORD, "passwordConfirm": PASSWORD, "verified": True}, auth), emails)
        stored = call(url, "GET", "/api/collections/users/records?perPage=1", headers=auth)
        print(json.dumps({"pocketbase_users": stored["totalItems"], "bcrypt_cost": cost}))
        open(out, "w").write("".join(f"{e}\t{PASSWORD}\n" for e in emails))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

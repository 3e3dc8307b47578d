#!/usr/bin/env python3
"""Create the `places` collection in a running PocketBase and load places.json into it.

    python3 bench/pb_setup.py --url http://127.0.0.1:PORT --email E --password P places.json

The superuser must exist (`pocketbase superuser upsert E P --dir DIR`). The collection mirrors the columns
Caravan fills from this data set, with a public listRule/viewRule and an index on (category, google_rating).
The `id` system field is widened to accept the data's slugs (up to 60 chars of [a-z0-9_-]) so the rows keep
their ids. Load time is not measured. Standard library only.
"""
import argparse
import http.client
import json
import sys
import urllib.parse


def request(conn, method, path, body=None, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = token
    conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    response = conn.getresponse()
    data = response.read()
    if response.status >= 300:
        sys.exit(f"{method} {path} -> {response.status}: {data[:500]!r}")
    return json.loads(data) if data else None


def text(name, **extra):
    return {"name": name, "type": "text", **extra}


def number(name):
    return {"name": name, "type": "number"}


FIELDS = [
    {"name": "id", "type": "text", "system": True, "primaryKey": True, "required": True,
     "min": 1, "max": 100, "pattern": "^[a-z0-9_-]+$", "autogeneratePattern": "[a-z0-9]{15}"},
    text("name_ar", required=True), text("name_en"), text("category", required=True), text("category_ar"),
    number("google_rating"), number("latitude"), number("longitude"),
    text("google_maps_url"), text("phone"), text("website"), text("address_ar"),
    {"name": "hours", "type": "json"}, {"name": "tags", "type": "json"}, {"name": "data_sources", "type": "json"},
]


def record_of(entry):
    record = {
        "id": entry["id"].strip(),
        "name_ar": entry["name_ar"].strip(),
        "name_en": entry.get("name_en") or "",
        "category": (entry.get("category_en") or "other").strip(),
        "category_ar": (entry.get("category") or "").strip(),
        "google_rating": entry.get("google_rating") or 0,
        "latitude": entry.get("lat"),
        "longitude": entry.get("lng"),
        "google_maps_url": entry.get("google_maps_url") or "",
        "phone": entry.get("phone") or "",
        "website": entry.get("website") or "",
        "address_ar": entry.get("street") or "",
        "tags": entry.get("tags"),
        "data_sources": entry.get("sources"),
    }
    if entry.get("hours") is not None:
        record["hours"] = entry["hours"]
    return record


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--email", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("file")
    args = parser.parse_args()
    url = urllib.parse.urlparse(args.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)

    auth = request(conn, "POST", "/api/collections/_superusers/auth-with-password",
                   {"identity": args.email, "password": args.password})
    token = auth["token"]
    request(conn, "POST", "/api/collections", {
        "name": "places", "type": "base",
        "listRule": "", "viewRule": "", "createRule": None, "updateRule": None, "deleteRule": None,
        "fields": FIELDS,
        "indexes": ["CREATE INDEX idx_places_category_rating ON places (category, google_rating)"],
    }, token)

    with open(args.file, "rb") as f:
        document = json.load(f)
    entries = document["places"] if isinstance(document, dict) else document
    for i, entry in enumerate(entries):
        request(conn, "POST", "/api/collections/places/records", record_of(entry), token)
    total = request(conn, "GET", "/api/collections/places/records?perPage=1", token=token)["totalItems"]
    print(json.dumps({"loaded": len(entries), "totalItems": total}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A cities file TIMES the size of a GeoNames one, for `caravan bench travel-search` at scale.

    python3 bench/world_generate.py --times 10 world_cities15000.csv > cities-10x.csv

The real rows come first; each generated copy k (1 … TIMES−1) of city i gets the id i + k·100,000,000, a name made of
the first word of one real city and the last word of another (Latin and Arabic alike, so token and prefix
frequencies stay those of real names), the population of a third, and the country and coordinates of city i.
Deterministic: the same input gives the same file.
"""
import argparse
import csv
import sys


def first_word(name):
    words = name.split()
    return words[0] if words else name


def last_word(name):
    words = name.split()
    return words[-1] if words else name


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--times", type=int, default=10)
    parser.add_argument("cities")
    args = parser.parse_args()
    with open(args.cities, encoding="utf-8", newline="") as source:
        reader = csv.DictReader(source)
        fields = reader.fieldnames
        rows = list(reader)
    out = csv.DictWriter(sys.stdout, fieldnames=fields, lineterminator="\n")
    out.writeheader()
    out.writerows(rows)
    n = len(rows)
    for k in range(1, args.times):
        for i, row in enumerate(rows):
            a, b, c = rows[(i * 7919 + k * 31) % n], rows[(i * 104729 + k * 17) % n], rows[(i * 1299709 + k) % n]
            generated = dict(row)
            generated["geonameid"] = str(int(row["geonameid"]) + k * 100_000_000)
            generated["name"] = f"{first_word(a['name'])} {last_word(b['name'])}"
            if a["name_ar"] and b["name_ar"]:
                generated["name_ar"] = f"{first_word(a['name_ar'])} {last_word(b['name_ar'])}"
            else:
                generated["name_ar"] = ""
            generated["population"] = c["population"]
            out.writerow(generated)


if __name__ == "__main__":
    main()

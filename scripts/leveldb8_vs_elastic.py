#!/usr/bin/env python3
"""Fig. 6 of ElasticBF at 43,844 files: LevelDB at 8 bits/key against
sievedb `elastic` at 4, per popularity.

Feeds BENCHMARKS.md, "ElasticBF against LevelDB and RocksDB at 43,844 files"
(against LevelDB at 8 bits/key). Takes a second.

    scripts/leveldb8_vs_elastic.py LDB8_DIR SIDE_BY_SIDE_CSV [CSV_OUT]

LDB8_DIR holds LevelDB's runs at 8 bits/key, each alone on the device
(ldb8-16m-1m-POP.json, POP: uniform, 0.99, 1.10, 1.20); their read requests
per Get come from /proc/diskstats. SIDE_BY_SIDE_CSV is the CSV that
scripts/elastic_vs_leveldb_pair.py wrote (sievedb's own device reads per Get).
Prints a Markdown table and writes it as CSV.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from elastic_baselines_table import result, write_csv  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ldb8, pairs = sys.argv[1], sys.argv[2]
    out = sys.argv[3] if len(sys.argv) > 3 else None
    sv = {r["popularity"]: float(r["sv_reads_per_get"]) for r in csv.DictReader(open(pairs))}
    rows = []
    for pop, reads in sv.items():
        d = result(f"{ldb8}/ldb8-16m-1m-{pop}.json")
        if not d:
            continue
        rows.append({
            "popularity": pop,
            "ldb8_requests_per_get": d["device_read_requests_per_op"],
            "ldb8_bytes_per_get": d["device_read_bytes_per_op"],
            "ldb8_ops_per_sec": d["ops_per_sec"],
            "sv_reads_per_get": reads,
        })
    write_csv(out, rows)
    print("| popularity | LevelDB 8 bits/key: requests per Get | bytes per Get | ops/s (alone) "
          "| `elastic` 4 bits/key: device reads per Get | LevelDB 8 ÷ `elastic` 4 |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['popularity']} | {r['ldb8_requests_per_get']:.3f} | {r['ldb8_bytes_per_get']:,.0f} "
              f"| {r['ldb8_ops_per_sec']:,.0f} | {r['sv_reads_per_get']:.3f} "
              f"| **{r['ldb8_requests_per_get'] / r['sv_reads_per_get']:.2f}×** |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""elastic-table1's CSV: each baseline against `elastic`, per popularity.

    scripts/table1_vs_baselines.py elastic-table1.csv

Prints a Markdown table: device reads per Get of `elastic` and of each
baseline row (`leveldb (4 bits/key)`, `rocksdb (4 bits/key)`), the
baseline's ÷ elastic's, and ops/s of both with elastic's ÷ the baseline's.
Builds from 1adc89e on print the same ratios in the summary itself.
"""
import csv
import sys
from statistics import median


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    pops = list(dict.fromkeys(r["distribution"] for r in rows))
    bases = list(dict.fromkeys(r["column"] for r in rows if r["repeat"] == "median"))
    print("| popularity | `elastic` reads/Get | " + " | ".join(
        f"{b}: reads/Get (÷ elastic) | {b}: ops/s (elastic ÷ it)" for b in bases)
        + " | `elastic` ops/s |")
    print("|---|---:|" + "---:|---:|" * len(bases) + "---:|")
    for p in pops:
        e = [r for r in rows if r["distribution"] == p and r["column"] == "elastic"]
        e_dev = median(float(r["device_reads_per_get"]) for r in e)
        e_ops = median(float(r["ops_per_sec"]) for r in e)
        cells = []
        for b in bases:
            r = next(r for r in rows if r["distribution"] == p and r["column"] == b)
            dev, ops = float(r["device_reads_per_get"]), float(r["ops_per_sec"])
            cells.append(f"{dev:.3f} (**{dev / e_dev:.2f}×**) | {ops:,.0f} (**{e_ops / ops:.2f}×**)")
        print(f"| {p} | {e_dev:.3f} | " + " | ".join(cells) + f" | {e_ops:,.0f} |")


if __name__ == "__main__":
    main()

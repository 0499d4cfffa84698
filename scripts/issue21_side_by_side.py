#!/usr/bin/env python3
"""sievedb `elastic` and LevelDB read side by side (issue 21): the table.

    scripts/issue21_side_by_side.py PAIR_DIR SOLO_DIR [CSV_OUT]

PAIR_DIR holds runs of the two engines started together on one seed
(sv-elastic-POP.json and ldb4-16m-1m-POP.json, POP: uniform, 0.99, 1.10,
1.20), so both met the same device; SOLO_DIR the same LevelDB runs made
alone (ldb4-16m-1m-POP.json). The device's counters (/proc/diskstats) of a
pair count both engines, so LevelDB's read requests per Get come from its
solo run; its own bytes read (/proc/self/io, per process) in both runs show
the two read alike. sievedb's device reads are its own count (block-cache
misses + filter unit loads + table-open reads), exact in any company.

sievedb finishes first; LevelDB then reads alone, on a device it no longer
shares. Where the runs printed progress (`--stats-interval`, in the
`/usr/bin/time` logs beside the JSON), LevelDB's ops/s are also taken over
the time both ran: its Gets done when sievedb finished, interpolated
between two progress lines, over sievedb's seconds.
Prints a Markdown table and writes it as CSV.
"""
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from issue21_baselines_table import result  # noqa: E402 (the JSON line of a run)

POPS = ["uniform", "0.99", "1.10", "1.20"]
# The paper's Table 1 (I/Os of 1M Gets, LevelDB and ElasticBF).
PAPER_IO = {"uniform": (1_525_595, 628_225), "0.99": (1_585_605, 578_553),
            "1.10": (1_634_752, 550_658), "1.20": (1_667_947, 545_345)}


def ops_at(log, t):
    """Gets done `t` seconds into the run, from its progress lines (None without them)."""
    if not os.path.exists(log):
        return None
    points = [(0.0, 0)]
    for m in re.finditer(r"readmixed: (\d+)/\d+ ops after ([\d.]+) s", open(log).read()):
        points.append((float(m.group(2)), int(m.group(1))))
    for (t0, n0), (t1, n1) in zip(points, points[1:]):
        if t0 <= t <= t1:
            return n0 + (n1 - n0) * (t - t0) / (t1 - t0)
    return None


def own_reads(d):
    s = d["stats"]
    return (s["block_cache_misses"] + s["filter_unit_loads"] + s.get("table_open_reads", 0)) / d["ops"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    pair, solo = sys.argv[1], sys.argv[2]
    out = sys.argv[3] if len(sys.argv) > 3 else None
    rows = []
    for pop in POPS:
        sv = result(f"{pair}/sv-elastic-{pop}.json")
        lp = result(f"{pair}/ldb4-16m-1m-{pop}.json")
        ls = result(f"{solo}/ldb4-16m-1m-{pop}.json")
        if not (sv and lp and ls):
            continue
        rows.append({
            "popularity": pop,
            "gets": sv["ops"], "ldb_gets": lp["ops"],
            "sv_reads_per_get": own_reads(sv),
            "ldb_requests_per_get_solo": ls["device_read_requests_per_op"],
            "ldb_bytes_per_get_pair": lp["device_read_bytes_per_op"],
            "ldb_bytes_per_get_solo": ls["device_read_bytes_per_op"],
            "sv_ops_per_sec": sv["ops_per_sec"], "ldb_ops_per_sec": lp["ops_per_sec"],
            "ldb_ops_per_sec_while_both_ran": None,
        })
        done = ops_at(f"{pair}/ldb4-16m-1m-{pop}.log", sv["seconds"])
        if done is not None:
            rows[-1]["ldb_ops_per_sec_while_both_ran"] = done / sv["seconds"]
    if out:
        with open(out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["popularity"])
            w.writeheader()
            w.writerows(rows)
    print("| popularity | LevelDB requests per Get (alone) | `elastic` device reads per Get "
          "| LevelDB ÷ `elastic` | paper | LevelDB bytes per Get, together / alone "
          "| ops/s: LevelDB / `elastic` | `elastic` ÷ LevelDB | LevelDB ops/s while both ran "
          "| `elastic` ÷ it | paper |")
    print("|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|")
    for r in rows:
        io = r["ldb_requests_per_get_solo"] / r["sv_reads_per_get"]
        paper = PAPER_IO[r["popularity"]][0] / PAPER_IO[r["popularity"]][1]
        w = r["ldb_ops_per_sec_while_both_ran"]
        both = f"{w:,.0f} | **{r['sv_ops_per_sec'] / w:.2f}×**" if w else "– | –"
        print(f"| {r['popularity']} | {r['ldb_requests_per_get_solo']:.3f} | {r['sv_reads_per_get']:.3f} "
              f"| **{io:.2f}×** | {paper:.2f}× | {r['ldb_bytes_per_get_pair']:,.0f} / "
              f"{r['ldb_bytes_per_get_solo']:,.0f} | {r['ldb_ops_per_sec']:,.0f} / {r['sv_ops_per_sec']:,.0f} "
              f"| **{r['sv_ops_per_sec'] / r['ldb_ops_per_sec']:.2f}×** | {both} | 1.94–2.24× |")


if __name__ == "__main__":
    main()

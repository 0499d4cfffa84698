#!/usr/bin/env python3
"""`elastic` and `uniform` read side by side: the table of scripts/policy-ops-pair.sh.

Feeds BENCHMARKS.md, "Filter memory under a budget" (read side by side).
Takes a second.

    scripts/policy_ops_pair.py RUN_DIR [CSV_OUT]

RUN_DIR holds rounds of two runs started together, one per policy, each on
its own copy of one tree and with the same seed (POLICY-ROUND.json beside
its `/usr/bin/time -v` log POLICY-ROUND.log, POLICY: uniform, elastic), so
both met the same device. Device reads per Get are each run's own count
(block-cache misses + filter unit loads + table-open reads). The run that
finished first then left the other alone on the device, so the other's
ops/s are also given over the time both ran (its Gets done when the first
finished, interpolated between its progress lines, over the first's
seconds). Prints a Markdown table and writes it as CSV.
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from elastic_baselines_table import result, write_csv  # noqa: E402
from elastic_vs_leveldb_pair import ops_at, own_reads  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    run_dir = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else None
    rounds = sorted(re.search(r"elastic-(\w+)\.json$", p).group(1)
                    for p in glob.glob(f"{run_dir}/elastic-*.json"))
    rows = []
    for rnd in rounds:
        el, un = (result(f"{run_dir}/{p}-{rnd}.json") for p in ("elastic", "uniform"))
        if not (el and un):
            continue
        first = min(el["seconds"], un["seconds"])
        both = {}
        for name, d in (("elastic", el), ("uniform", un)):
            done = d["ops"] if d["seconds"] <= first else ops_at(f"{run_dir}/{name}-{rnd}.log", first)
            both[name] = done / first if done is not None else None
        rows.append({
            "round": rnd, "gets": el["ops"],
            "elastic_reads_per_get": own_reads(el), "uniform_reads_per_get": own_reads(un),
            "elastic_ops_per_sec": el["ops_per_sec"], "uniform_ops_per_sec": un["ops_per_sec"],
            "elastic_ops_per_sec_while_both_ran": both["elastic"],
            "uniform_ops_per_sec_while_both_ran": both["uniform"],
        })
    write_csv(out, rows)
    print("| round | device reads per Get: `elastic` / `uniform` | ops/s, whole run: `elastic` / `uniform` "
          "| ratio | ops/s while both ran: `elastic` / `uniform` | ratio |")
    print("|---|---|---|---:|---|---:|")
    for r in rows:
        e, u = r["elastic_ops_per_sec_while_both_ran"], r["uniform_ops_per_sec_while_both_ran"]
        both = f"{e:,.0f} / {u:,.0f} | **{e / u:.2f}×**" if e and u else "– | –"
        print(f"| {r['round']} | {r['elastic_reads_per_get']:.3f} / {r['uniform_reads_per_get']:.3f} "
              f"| {r['elastic_ops_per_sec']:,.0f} / {r['uniform_ops_per_sec']:,.0f} "
              f"| {r['elastic_ops_per_sec'] / r['uniform_ops_per_sec']:.2f}× | {both} |")


if __name__ == "__main__":
    main()

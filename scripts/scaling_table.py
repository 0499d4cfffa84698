#!/usr/bin/env python3
"""The Markdown report of scripts/scaling.sh's CSV (or of several, rows
concatenated): a table, each engine's µs per op as a ratio to the reference
engine's per size, and how each engine's cost grew from the smallest size
to the largest. Every number is computed from the CSV. BENCHMARKS.md's
scaling tables are rendered by scripts/benchmarks_md.py from the same CSVs;
this is the report of a new run. Takes a second.

    scripts/scaling_table.py scaling.csv [more.csv ...] [--reference sievedb]
"""
import argparse
import csv

p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
p.add_argument("csv", nargs="+")
p.add_argument("--reference", default="sievedb", help="engine the ratios are taken against")
a = p.parse_args()
rows = [r for path in a.csv for r in csv.DictReader(open(path))]
nums = sorted({int(r["num"]) for r in rows})
engines = list(dict.fromkeys(r["engine"] for r in rows))
by = {(int(r["num"]), r["engine"]): r for r in rows}

print("| keys | engine | fillrandom µs | wait s | readrandom µs | readmissing µs | fill peak RSS MB "
      "| read peak RSS MB | write amp | disk MB | open s |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for n in nums:
    for e in engines:
        r = by.get((n, e))
        if r is None:
            continue
        f = lambda k, d=3: f"{float(r[k]):.{d}f}"
        print(f"| {n:,} | {e} | {f('fillrandom_us')} | {f('waitforcompaction_s', 1)} | {f('readrandom_us')} | "
              f"{f('readmissing_us')} | {int(r['fill_rss_kb']) / 1024:.0f} | {int(r['read_rss_kb']) / 1024:.0f} | "
              f"{f('write_amp', 2)} | {int(r['disk_bytes']) / 1e6:,.0f} | {f('open_s', 2)} |")
print()
metrics = ("fillrandom_us", "readrandom_us", "readmissing_us")
for n in nums:
    ref = by.get((n, a.reference))
    if ref is None or not any((n, e) in by for e in engines if e != a.reference):
        continue
    parts = []
    for m in metrics:
        rs = [f"{e} {float(by[(n, e)][m]) / float(ref[m]):.2f}×"
              for e in engines if e != a.reference and (n, e) in by]
        parts.append(f"{m[:-3]}: " + ", ".join(rs))
    print(f"- {n:,} keys, µs per op ÷ {a.reference}'s (above 1: {a.reference} faster): " + "; ".join(parts) + ".")
lo, hi = nums[0], nums[-1]
for e in engines:
    if (lo, e) not in by or (hi, e) not in by:
        missing = [f"{n:,}" for n in nums if (n, e) not in by]
        print(f"- {e}: no row at {', '.join(missing)} keys.")
        continue
    x, y = by[(lo, e)], by[(hi, e)]
    g = lambda m: float(y[m]) / float(x[m])
    print(f"- {e}, {lo:,} → {hi:,} keys ({hi // lo}× the data): fillrandom ×{g('fillrandom_us'):.2f}, "
          f"readrandom ×{g('readrandom_us'):.2f}, readmissing ×{g('readmissing_us'):.2f} per op; write "
          f"amplification {float(x['write_amp']):.2f} → {float(y['write_amp']):.2f}; fill peak RSS "
          f"{int(x['fill_rss_kb']) / 1024:.0f} → {int(y['fill_rss_kb']) / 1024:.0f} MB.")

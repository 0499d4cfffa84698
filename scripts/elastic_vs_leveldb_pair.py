#!/usr/bin/env python3
"""sievedb `elastic` and LevelDB read side by side: the table.

Feeds BENCHMARKS.md, "ElasticBF against LevelDB and RocksDB at 43,844 files"
(throughput, side by side). Takes a second; the runs it reads take up to
half an hour each.

    scripts/elastic_vs_leveldb_pair.py PAIR_DIR SOLO_DIR [CSV_OUT]

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
between two progress lines, over sievedb's seconds. A pair whose LevelDB
run was stopped once sievedb had finished has no JSON line for LevelDB but
a file ldb4-POP.stopped (written just before the stop: the time, the
process's /proc/PID/io and its last progress line); its bytes per Get are
then read_bytes over the Gets of that line, and its whole-run ops/s are
left out.
Prints a Markdown table and writes it as CSV.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from elastic_baselines_table import peak_rss_mb, result, write_csv  # noqa: E402

POPS = ["uniform", "0.99", "1.10", "1.20"]
# sievedb's device reads, by kind.
PARTS = ["block_cache_misses", "filter_unit_loads", "table_open_reads"]
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
    # A run stopped just after its last line: at most one interval past it,
    # at the rate of that line's interval.
    if len(points) > 2:
        (t0, n0), (t1, n1) = points[-2], points[-1]
        if t1 < t <= t1 + (t1 - t0):
            return n1 + (n1 - n0) * (t - t1) / (t1 - t0)
    return None


def own_reads(d):
    s = d["stats"]
    return (s["block_cache_misses"] + s["filter_unit_loads"] + s.get("table_open_reads", 0)) / d["ops"]


def stopped(path):
    """(read_bytes, Gets done) of a LevelDB run stopped early (None without its file)."""
    if not os.path.exists(path):
        return None
    text = open(path).read()
    rb = re.search(r"^read_bytes: (\d+)", text, re.M)
    done = re.findall(r"readmixed: (\d+)/\d+ ops after", text)
    if not (rb and done) or int(done[-1]) == 0:
        return None
    return int(rb.group(1)), int(done[-1])


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
        cut = None if lp else stopped(f"{pair}/ldb4-{pop}.stopped")
        if not (sv and ls and (lp or cut)):
            continue
        rows.append({
            "popularity": pop,
            "gets": sv["ops"], "ldb_gets": lp["ops"] if lp else cut[1],
            "sv_reads_per_get": own_reads(sv),
            "ldb_requests_per_get_solo": ls["device_read_requests_per_op"],
            "ldb_bytes_per_get_pair": lp["device_read_bytes_per_op"] if lp else cut[0] / cut[1],
            "ldb_bytes_per_get_solo": ls["device_read_bytes_per_op"],
            "sv_ops_per_sec": sv["ops_per_sec"],
            "ldb_ops_per_sec": lp["ops_per_sec"] if lp else None,
            "ldb_ops_per_sec_while_both_ran": None,
            **{f"sv_{k}_per_get": sv["stats"].get(k, 0) / sv["ops"] for k in PARTS},
            "sv_micros_per_device_request": sv.get("device_read_micros_per_request"),
            "sv_peak_rss_mb": peak_rss_mb(f"{pair}/sv-elastic-{pop}.log"),
        })
        done = ops_at(f"{pair}/ldb4-16m-1m-{pop}.log", sv["seconds"])
        if done is not None:
            rows[-1]["ldb_ops_per_sec_while_both_ran"] = done / sv["seconds"]
    write_csv(out, rows)
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
        lo = r["ldb_ops_per_sec"]
        whole = (f"{lo:,.0f} / {r['sv_ops_per_sec']:,.0f} | **{r['sv_ops_per_sec'] / lo:.2f}×**" if lo
                 else f"stopped / {r['sv_ops_per_sec']:,.0f} | –")
        print(f"| {r['popularity']} | {r['ldb_requests_per_get_solo']:.3f} | {r['sv_reads_per_get']:.3f} "
              f"| **{io:.2f}×** | {paper:.2f}× | {r['ldb_bytes_per_get_pair']:,.0f} / "
              f"{r['ldb_bytes_per_get_solo']:,.0f} | {whole} | {both} | 1.94–2.24× |")
    print()
    print("| popularity | `elastic`: block-cache misses per Get | unit loads per Get "
          "| table-open reads per Get | µs per device request (both engines') | peak RSS |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        us, rss = r["sv_micros_per_device_request"], r["sv_peak_rss_mb"]
        print(f"| {r['popularity']} | " + " | ".join(f"{r[f'sv_{k}_per_get']:.3f}" for k in PARTS)
              + f" | {'–' if us is None else f'{us:,.0f}'} | {'–' if rss is None else f'{rss:.0f} MiB'} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""sievedb `elastic` and RocksDB read side by side: the table.

Feeds BENCHMARKS.md, "ElasticBF against LevelDB and RocksDB at 43,844 files"
(throughput, side by side). Takes a second; the runs it reads take up to
an hour each.

    scripts/elastic_vs_rocksdb_pair.py PAIR_DIR [CSV_OUT]

PAIR_DIR holds runs of the two engines started together on one seed and run
to their end (sv-elastic-POP.json and rdb-POP.json, POP: uniform, 0.99,
1.10, 1.20), each beside its `/usr/bin/time -v` log (.log). Both read with
O_DIRECT, so each engine's device reads are its own: sievedb's count
(block-cache misses + filter unit loads + table-open reads), and RocksDB's
read system calls (`device_read_syscalls`, Δ `syscr` of its /proc/self/io:
with `use_direct_reads` every block, index, filter and footer read is one
`pread` that bypasses the page cache) with their bytes (`read_bytes`).
sievedb's read system calls are given too: its count adds a file's filter
units one by one where a load of several adjacent units is one read. The
device's own counters (/proc/diskstats) count both engines and are not used.

sievedb finishes first; RocksDB then reads alone. Its ops/s are given over
its whole run and over the time both ran (its Gets done when sievedb
finished, interpolated between its progress lines, over sievedb's seconds).
Where a sampler wrote NAME-POP.samples beside the runs (every 10 s: the
epoch, the process's `syscr` and `read_bytes`, `|`, its last progress line),
a second table gives each engine's read system calls per Get past its first
SKIP Gets (default 200,000; both engines read with O_DIRECT `pread`, so
this compares them alike, after the cold start).
A RocksDB run stopped before its end (no JSON) is given by its last sample:
its reads and bytes per Get over the Gets of that sample's progress line.
Prints Markdown tables and writes the first as CSV.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from elastic_baselines_table import peak_rss_mb, result, write_csv  # noqa: E402
from elastic_vs_leveldb_pair import POPS, ops_at, own_reads  # noqa: E402


SKIP = int(os.environ.get("SKIP", 200_000))


def samples(path):
    """(syscr, read_bytes, Gets done) of each sample line with a progress line, in order."""
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path):
        m = re.match(r"\d+ (\d+) (\d+) \| .*?: (\d+)/\d+ ops after", line)
        if m:
            out.append(tuple(int(x) for x in m.groups()))
    return out


def later(path):
    """(syscalls per Get, Gets) between the first sample past SKIP Gets and the last (None if too few)."""
    s = [x for x in samples(path) if x[2] >= SKIP]
    if len(s) < 2 or s[-1][2] <= s[0][2]:
        return None
    return (s[-1][0] - s[0][0]) / (s[-1][2] - s[0][2]), s[-1][2] - s[0][2]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    pair = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else None
    rows = []
    for pop in POPS:
        sv = result(f"{pair}/sv-elastic-{pop}.json")
        rdb = result(f"{pair}/rdb-{pop}.json")
        # A RocksDB run stopped before its end: its last sample instead.
        cut = None if rdb else (samples(f"{pair}/rdb-{pop}.samples") or [None])[-1]
        if not (sv and (rdb or cut)):
            continue
        done = ops_at(f"{pair}/rdb-{pop}.log", sv["seconds"])
        rdb_gets = rdb["ops"] if rdb else cut[2]
        rows.append({
            "popularity": pop,
            "gets": sv["ops"], "rdb_gets": rdb_gets,
            "sv_reads_per_get": own_reads(sv),
            "rdb_reads_per_get": (rdb["device_read_syscalls"] if rdb else cut[0]) / rdb_gets,
            "sv_syscalls_per_get": sv["device_read_syscalls"] / sv["ops"],
            "rdb_bytes_per_get": rdb["device_read_bytes_per_op"] if rdb else cut[1] / rdb_gets,
            "sv_bytes_per_get": sv["device_read_bytes_per_op"],
            "sv_ops_per_sec": sv["ops_per_sec"],
            "rdb_ops_per_sec": rdb["ops_per_sec"] if rdb else None,
            "rdb_ops_per_sec_while_both_ran": done / sv["seconds"] if done is not None else None,
            "sv_peak_rss_mb": peak_rss_mb(f"{pair}/sv-elastic-{pop}.log"),
            "rdb_peak_rss_mb": peak_rss_mb(f"{pair}/rdb-{pop}.log"),
        })
    write_csv(out, rows)
    print("| popularity | RocksDB reads per Get | `elastic` device reads per Get | RocksDB ÷ `elastic` "
          "| `elastic` read system calls per Get | RocksDB ÷ them "
          "| bytes read per Get: RocksDB / `elastic` | ops/s: RocksDB (whole run) / `elastic` "
          "| RocksDB ops/s while both ran | `elastic` ÷ it | peak RSS: RocksDB / `elastic` |")
    print("|---|---:|---:|---:|---:|---:|---|---|---:|---:|---|")
    for r in rows:
        w = r["rdb_ops_per_sec_while_both_ran"]
        both = f"{w:,.0f} | **{r['sv_ops_per_sec'] / w:.2f}×**" if w else "– | –"
        whole = (f"{r['rdb_ops_per_sec']:,.0f}" if r["rdb_ops_per_sec"]
                 else f"stopped after {r['rdb_gets']:,} Gets")
        rss = " / ".join("–" if v is None else f"{v:.0f} MiB"
                         for v in (r["rdb_peak_rss_mb"], r["sv_peak_rss_mb"]))
        print(f"| {r['popularity']} | {r['rdb_reads_per_get']:.3f} | {r['sv_reads_per_get']:.3f} "
              f"| **{r['rdb_reads_per_get'] / r['sv_reads_per_get']:.2f}×** "
              f"| {r['sv_syscalls_per_get']:.3f} | {r['rdb_reads_per_get'] / r['sv_syscalls_per_get']:.2f}× "
              f"| {r['rdb_bytes_per_get']:,.0f} / {r['sv_bytes_per_get']:,.0f} "
              f"| {whole} / {r['sv_ops_per_sec']:,.0f} | {both} | {rss} |")
    later_rows = [(pop, later(f"{pair}/rdb-{pop}.samples"), later(f"{pair}/sv-elastic-{pop}.samples"))
                  for pop in POPS]
    later_rows = [r for r in later_rows if r[1] or r[2]]
    if later_rows:
        print()
        print(f"| popularity | read system calls per Get past {SKIP:,} Gets: RocksDB | `elastic` "
              "| RocksDB ÷ `elastic` |")
        print("|---|---|---|---:|")
        for pop, rdb, sv in later_rows:
            show = lambda x: "–" if x is None else f"{x[0]:.3f} ({x[1]:,} Gets)"
            ratio = f"{rdb[0] / sv[0]:.2f}×" if rdb and sv and sv[0] > 0 else "–"
            print(f"| {pop} | {show(rdb)} | {show(sv)} | {ratio} |")

if __name__ == "__main__":
    main()

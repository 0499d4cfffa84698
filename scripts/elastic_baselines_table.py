#!/usr/bin/env python3
"""ElasticBF against its baselines at 43,844 files, each engine read alone, from the runs' JSON.

Also the helpers (result, write_csv, peak_rss_mb) of the other *_pair.py
scripts. Feeds no current section: its last table (by hand, build 2220a85)
was superseded by `sievedb experiment elastic-table1 --scale large`
(BENCHMARKS.md, "ElasticBF against LevelDB and RocksDB at 43,844 files").
Takes a second.

    scripts/elastic_baselines_table.py RUN_DIR [CSV_OUT]

RUN_DIR holds one `sievedb bench --json` output per engine and popularity,
named NAME-POP.json (POP: uniform, 0.99, 1.10, 1.20), each beside its
`/usr/bin/time -v` log NAME-POP.log. NAME is one of the configurations below;
missing files are skipped. Prints a Markdown table (ops/s, read requests on
the device per Get from /proc/diskstats, their mean time in flight where the
build recorded it, bytes read per Get, peak RSS) and
sievedb's own count of device reads (block-cache misses + filter unit loads
+ table-open reads), and the ratios of each baseline to each sievedb
configuration over runs of as many Gets (the baseline's read requests over
sievedb's own count, which stays exact when something else shares the
device), and per popularity the paper's Table 1 beside ours; writes the rows
as CSV.
"""
import csv, json, os, re, sys

CONFIGS = [
    ("sv-elastic", "sievedb `elastic`, 4 bits/key budget, O_DIRECT, 8 MiB block cache"),
    ("sv-elastic-meta0", "the same, `--table-meta-cache-size 0`"),
    ("sv-elastic-meta0-100k", "the same, `--table-meta-cache-size 0`"),
    ("ldb4-16m-1m", "LevelDB 4 bits/key, 16 MiB cgroup"),
    ("ldb4-16m", "LevelDB 4 bits/key, 16 MiB cgroup"),
    ("ldb4-256m", "LevelDB 4 bits/key, 256 MiB cgroup"),
    ("ldb8-16m-a", "LevelDB 8 bits/key, 16 MiB cgroup, first run after the fill"),
    ("ldb8-16m-b", "LevelDB 8 bits/key, 16 MiB cgroup, second run"),
    ("rdb", "RocksDB 4 bits/key, O_DIRECT, 8 MiB block cache"),
]
POPS = ["uniform", "0.99", "1.10", "1.20"]


def result(path):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    for line in open(path):
        d = json.loads(line)
        if d.get("type") == "result" and d["benchmark"] == "readmixed":
            return d
    return None


def write_csv(path, rows):
    """Writes `rows` (dicts with the same keys) to `path` as CSV, if a path is given."""
    if not path:
        return
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["popularity"])
        w.writeheader()
        w.writerows(rows)


def peak_rss_mb(log):
    if not os.path.exists(log):
        return None
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(log).read())
    return int(m.group(1)) / 1024 if m else None


def main():
    run, out = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
    rows = {}
    for name, _ in CONFIGS:
        for pop in POPS:
            d = result(f"{run}/{name}-{pop}.json")
            if d is None:
                continue
            s = d.get("stats") or {}
            own = None
            if s:
                # The reads that loaded filter units (builds before they were
                # counted: the units, an upper bound).
                unit_reads = s.get("filter_unit_reads", s.get("filter_unit_loads", 0))
                own = (s.get("block_cache_misses", 0) + unit_reads
                       + s.get("table_open_reads", 0)) / d["ops"]
            rows[(name, pop)] = {
                "ops": d["ops"], "ops_per_sec": d["ops_per_sec"], "found": d.get("found"),
                "requests_per_get": d.get("device_read_requests_per_op"),
                "bytes_per_get": d.get("device_read_bytes_per_op"),
                "micros_per_request": d.get("device_read_micros_per_request"),
                "own_device_reads_per_get": own,
                "peak_rss_mb": peak_rss_mb(f"{run}/{name}-{pop}.log"),
            }
    if out:
        with open(out, "w", newline="") as f:
            w = csv.writer(f)
            keys = ["ops", "ops_per_sec", "found", "requests_per_get", "micros_per_request",
                    "bytes_per_get", "own_device_reads_per_get", "peak_rss_mb"]
            w.writerow(["config", "popularity"] + keys)
            for (name, pop), r in rows.items():
                w.writerow([name, pop] + [r[k] for k in keys])
    fmt = lambda x, p: "–" if x is None else f"{x:,.{p}f}"
    print("| configuration | popularity | Gets | ops/s | read requests per Get | µs per request "
          "| bytes read per Get | sievedb's own count per Get | peak RSS MB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, label in CONFIGS:
        for pop in POPS:
            r = rows.get((name, pop))
            if r:
                print(f"| {label} | {pop} | {r['ops']:,} | {fmt(r['ops_per_sec'], 0)} | {fmt(r['requests_per_get'], 3)} "
                      f"| {fmt(r['micros_per_request'], 0)} | {fmt(r['bytes_per_get'], 0)} | {fmt(r['own_device_reads_per_get'], 3)} "
                      f"| {fmt(r['peak_rss_mb'], 0)} |")
    print()
    for ref, ref_label in CONFIGS[:3]:
        for name, label in CONFIGS[3:]:
            parts = []
            for pop in POPS:
                e, b = rows.get((ref, pop)), rows.get((name, pop))
                if not (e and b and e["own_device_reads_per_get"] and b["requests_per_get"]):
                    continue
                if e["ops"] != b["ops"]:
                    continue  # only runs of as many Gets
                parts.append(f"{pop} {b['requests_per_get'] / e['own_device_reads_per_get']:.2f}× "
                             f"the device reads, sievedb at {e['ops_per_sec'] / b['ops_per_sec']:.2f}× "
                             f"its ops/s")
            if parts:
                gets = rows[(ref, next(p for p in POPS if (ref, p) in rows))]["ops"]
                print(f"- {label}, against {ref_label}, {gets:,} Gets: " + "; ".join(parts) + ".")
    # Per popularity: the paper's Table 1 against ours (LevelDB in 16 MiB, 1M
    # Gets); its Fig. 5 gives throughput only as a range over the popularities.
    paper = {"uniform": (1_525_595, 628_225), "0.99": (1_585_605, 578_553),
             "1.10": (1_634_752, 550_658), "1.20": (1_667_947, 545_345)}
    print()
    print("| popularity | LevelDB, requests per Get | sievedb `elastic` | LevelDB ÷ elastic "
          "| `elastic`, no metadata cache | LevelDB ÷ it | paper: LevelDB ÷ ElasticBF "
          "| ops/s: LevelDB / `elastic` | `elastic` ÷ LevelDB ops/s | paper |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for pop in POPS:
        l, e, m = (rows.get((n, pop)) for n in ("ldb4-16m-1m", "sv-elastic", "sv-elastic-meta0"))
        if not (l and e):
            continue
        lr, er = l["requests_per_get"], e["own_device_reads_per_get"]
        mr = m["own_device_reads_per_get"] if m else None
        meta0 = f"{mr:.3f} | {lr / mr:.2f}×" if mr else "– | –"
        print(f"| {pop} | {lr:.3f} | {er:.3f} | **{lr / er:.2f}×** | {meta0} "
              f"| {paper[pop][0] / paper[pop][1]:.2f}× | {l['ops_per_sec']:,.0f} / {e['ops_per_sec']:,.0f} "
              f"| **{e['ops_per_sec'] / l['ops_per_sec']:.2f}×** | 1.94–2.24× |")

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Summary of an issue12-bars.sh output directory, as Markdown on stdout.

    scripts/issue12-summary.py OUT_DIR

Reads the JSON lines `sievedb bench --json` wrote (OUT_DIR/<run>.json, and the
before/after runs OUT_DIR/ba-<run>-<after|before>-<repeat>.json) and prints,
per run: median, min and max micros/op and ops/sec per engine and benchmark
over the repeats, the ratio sievedb ÷ engine in throughput (median ops/sec;
above 1: sievedb is faster), the readwhilewriting writer's rate, the bars of
issue 12 with the ratios they ask for, and the before/after ratios. Every
number comes from the result lines; nothing is filled in otherwise.
"""

import glob
import json
import os
import re
import statistics
import sys

# (run, title); the exact flags of each run are in meta.txt (`run NAME: ...`).
RUNS = [
    ("default", "DEFAULT shape (24 B keys / 100 B values, defaults)"),
    ("small", "SMALL shape (512 B keys / 100 B values, T = 4, L1 1 MiB, 256 KiB files)"),
    ("rww", "readwhilewriting, 1 reader, DEFAULT shape"),
]
ENGINES = ["sievedb", "leveldb", "rocksdb", "fjall"]
# (run, benchmark, engine, least sievedb ÷ engine throughput ratio) of issue 12.
BARS = [
    ("default", "readrandom", "leveldb", 1.3),
    ("default", "readrandom", "rocksdb", 1.5),
    ("small", "readrandom", "leveldb", 1.3),
    ("small", "readrandom", "rocksdb", 1.5),
    ("small", "fillrandom", "rocksdb", 1.2),
    ("small", "fillrandom", "fjall", 1.2),
    ("default", "fillrandom", "leveldb", 1.2),
    ("rww", "readwhilewriting", "rocksdb", 1.0),
]
WRITER = "readwhilewriting (writer)"


def read_lines(path):
    """The JSON objects of one file, one per line."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def results(lines):
    """The per-repeat result lines, plus a synthetic writer result per
    readwhilewriting line (its writer's ops and seconds)."""
    out = []
    for r in lines:
        if r.get("type") != "result":
            continue
        out.append(r)
        if r["benchmark"] == "readwhilewriting" and r.get("writer_ops") is not None:
            secs = r["writer_seconds"]
            rate = r["writer_ops_per_sec"]
            out.append({
                "engine": r["engine"],
                "benchmark": WRITER,
                "repeat": r["repeat"],
                "ops": r["writer_ops"],
                "found": None,
                "seconds": secs,
                "ops_per_sec": rate,
                "micros_per_op": 1e6 / rate if rate else None,
            })
    return out


def spread(xs):
    """median, min, max of the numbers in xs (None when there are none)."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return statistics.median(xs), min(xs), max(xs)


def group(rs):
    """{(benchmark, engine): [results]} in first-seen benchmark order."""
    g = {}
    for r in rs:
        g.setdefault((r["benchmark"], r["engine"]), []).append(r)
    return g


def fmt(x, digits):
    return "-" if x is None else f"{x:,.{digits}f}"


def run_table(rs):
    """Markdown rows of one run and {(benchmark, engine): median ops/sec}."""
    g = group(rs)
    medians = {
        k: spread([r["ops_per_sec"] for r in runs])[0]
        for k, runs in g.items()
        if runs[0]["ops_per_sec"] is not None
    }
    rows = [
        "| benchmark | engine | n | µs/op median | µs/op min–max | ops/s median | ops/s min–max "
        "| sievedb ÷ engine (ops/s) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for b in dict.fromkeys(b for b, _ in g):
        for e in ENGINES:
            runs = g.get((b, e))
            if not runs:
                continue
            if runs[0]["ops_per_sec"] is None:
                # A step measured by its elapsed time only (waitforcompaction).
                s = spread([r["seconds"] for r in runs])
                rows.append(f"| {b} | {e} | {len(runs)} | {s[0]:.3f} s elapsed | "
                            f"{s[1]:.3f}–{s[2]:.3f} s | - | - | - |")
                continue
            us = spread([r["micros_per_op"] for r in runs])
            ops = spread([r["ops_per_sec"] for r in runs])
            base = medians.get((b, "sievedb"))
            ratio = f"{base / ops[0]:.2f}" if base and ops[0] else "-"
            rows.append(f"| {b} | {e} | {len(runs)} | {fmt(us[0], 3)} | {fmt(us[1], 3)}–{fmt(us[2], 3)} "
                        f"| {fmt(ops[0], 0)} | {fmt(ops[1], 0)}–{fmt(ops[2], 0)} | {ratio} |")
    return rows, medians


def found_problems(name, rs):
    """Lookups that did not find every key (the reads must all be hits)."""
    bad = []
    for r in rs:
        if r["benchmark"] in ("readrandom", "readwhilewriting") and r.get("found") != r["ops"]:
            bad.append(f"- {name}: {r['engine']} {r['benchmark']} repeat {r['repeat']} "
                       f"found {r.get('found')} of {r['ops']}")
    return bad


def versions(all_lines):
    """engine -> its reported version (and RocksDB's header version)."""
    seen = {}
    for r in all_lines:
        s = r.get("settings") or {}
        e = s.get("engine")
        if e and e not in seen and e != "sievedb":
            v = str(s.get("version", "?"))
            if s.get("header_version"):
                v += f" (headers {s['header_version']})"
            seen[e] = v
    return seen


def shapes(rs):
    """engine -> files per level after its first readrandom/readwhilewriting."""
    out = {}
    for r in rs:
        if r["benchmark"] in ("readrandom", "readwhilewriting") and r.get("files_per_level"):
            out.setdefault(r["engine"], r["files_per_level"])
    return out


def before_after(out_dir, run):
    """Markdown rows comparing the after and before binaries on one run."""
    per = {"after": [], "before": []}
    for path in sorted(glob.glob(os.path.join(out_dir, f"ba-{run}-*-*.json"))):
        m = re.match(rf"ba-{re.escape(run)}-(after|before)-(\d+)\.json$", os.path.basename(path))
        if m:
            per[m.group(1)] += results(read_lines(path))
    if not per["after"] and not per["before"]:
        return []
    ga, gb = group(per["after"]), group(per["before"])
    rows = [
        f"#### {run}: this binary (after) vs BEFORE, `--engine sievedb`, interleaved",
        "",
        "| benchmark | n | after ops/s median (min–max) | before ops/s median (min–max) | after ÷ before |",
        "|---|---:|---:|---:|---:|",
    ]
    for (b, e) in ga:
        a, p = ga[(b, e)], gb.get((b, e), [])
        if a[0]["ops_per_sec"] is None:
            sa, sp = spread([r["seconds"] for r in a]), spread([r["seconds"] for r in p])
            if sa and sp:
                rows.append(f"| {b} (s elapsed) | {len(a)}/{len(p)} | {sa[0]:.3f} ({sa[1]:.3f}–{sa[2]:.3f}) "
                            f"| {sp[0]:.3f} ({sp[1]:.3f}–{sp[2]:.3f}) | {sp[0] / sa[0]:.2f} (before ÷ after time) |")
            continue
        sa, sp = spread([r["ops_per_sec"] for r in a]), spread([r["ops_per_sec"] for r in p])
        ratio = f"{sa[0] / sp[0]:.2f}" if sa and sp and sp[0] else "-"
        sps = f"{sp[0]:,.0f} ({sp[1]:,.0f}–{sp[2]:,.0f})" if sp else "-"
        rows.append(f"| {b} | {len(a)}/{len(p)} | {sa[0]:,.0f} ({sa[1]:,.0f}–{sa[2]:,.0f}) | {sps} | {ratio} |")
    return rows + [""]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    print("# Issue 12 bars")
    print()
    meta = os.path.join(out_dir, "meta.txt")
    flags = {}
    if os.path.exists(meta):
        text = open(meta).read().rstrip()
        print("```")
        print(text)
        print("```")
        print()
        for line in text.splitlines():
            m = re.match(r"run (\w+): (.*)$", line)
            if m:
                flags[m.group(1)] = m.group(2)
    all_lines, medians, problems = [], {}, []
    for run, title in RUNS:
        path = os.path.join(out_dir, f"{run}.json")
        if not os.path.exists(path):
            continue
        lines = read_lines(path)
        all_lines += lines
        rs = results(lines)
        print(f"## {run}: {title}")
        print()
        if run in flags:
            print(f"`sievedb bench {flags[run]}`")
            print()
        rows, med = run_table(rs)
        print("\n".join(rows))
        print()
        tree = shapes(rs)
        if tree:
            print("Files per level at the reads (first repeat): " + "; ".join(
                f"{e} {'/'.join(map(str, f))}" for e, f in tree.items()))
            print()
        for (b, e), v in med.items():
            medians[(run, b, e)] = v
        problems += found_problems(run, rs)
    vs = versions(all_lines)
    if vs:
        print("Baseline versions (from their settings): " + "; ".join(f"{e} {v}" for e, v in vs.items()))
        print()
    print("## Bars (sievedb ÷ engine, median throughput)")
    print()
    scale = re.search(r"NUM_SCALE ([0-9.eE+-]+)", open(meta).read()) if os.path.exists(meta) else None
    if scale and float(scale.group(1)) != 1.0:
        print(f"**NUM_SCALE {scale.group(1)}: the shapes are shrunk; this is a smoke run, "
              "not a measurement of the bars.**")
        print()
    print("| run | benchmark | vs | ratio | bar | |")
    print("|---|---|---|---:|---:|---|")
    for run, b, e, bar in BARS:
        s, o = medians.get((run, b, "sievedb")), medians.get((run, b, e))
        if s and o:
            r = s / o
            print(f"| {run} | {b} | {e} | {r:.2f} | ≥ {bar} | {'met' if r >= bar else 'NOT met'} |")
        else:
            print(f"| {run} | {b} | {e} | - | ≥ {bar} | no data |")
    print()
    ba = [row for run, _ in RUNS for row in before_after(out_dir, run)]
    if ba:
        print("## Before/after")
        print()
        print("\n".join(ba))
    if problems:
        print("## Lookups that missed (every lookup should find its key)")
        print()
        print("\n".join(problems))
        print()


if __name__ == "__main__":
    main()

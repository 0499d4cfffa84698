#!/usr/bin/env python3
"""Renders BENCHMARKS.md, and the headline table of README.md, from committed CSVs.

    scripts/benchmarks_md.py            # writes BENCHMARKS.md and README.md's headline block
    scripts/benchmarks_md.py --check    # fails (exit 1) if either differs from what the CSVs give

The prose is the template docs/benchmarks/template.md; every `{{name}}` in it is
replaced by the table or figure that the function `name` below computes from a
CSV (docs/benchmarks/, docs/scaling/, docs/reproduction/,
docs/reproduction-large/). No figure is typed into the template or here, but
the papers' own numbers (labelled as theirs). README.md's block between
`<!-- headline:begin -->` and `<!-- headline:end -->` is rendered the same way,
and the guide's sentences that quote a figure (GUIDE below) are checked.
CI (.ci/run) runs `--check`, so the files and the CSVs cannot drift apart.
Python 3 standard library only. Takes well under a second.
"""
import csv
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(ROOT, "docs", "benchmarks", "template.md")
OUT = os.path.join(ROOT, "BENCHMARKS.md")
README = os.path.join(ROOT, "README.md")
ENGINES = ["sievedb", "leveldb", "rocksdb", "fjall"]
NAMES = {"sievedb": "sievedb", "leveldb": "LevelDB", "rocksdb": "RocksDB", "fjall": "fjall",
         "rocksdict": "rocksdict", "plyvel": "plyvel"}
POPS = [("uniform", "uniform"), ("zipf 0.99", "0.99"), ("zipf 1.10", "1.10"), ("zipf 1.20", "1.20")]
# Paper 001 (ElasticBF), Table 1: LevelDB's I/Os over ElasticBF's per popularity.
PAPER_001_TABLE1 = {"uniform": 2.43, "zipf 0.99": 2.74, "zipf 1.10": 2.97, "zipf 1.20": 3.06}


def rows(path):
    with open(os.path.join(ROOT, path), newline="") as f:
        return list(csv.DictReader(f))


def num(s):
    return float(s) if s not in (None, "") else None


def f(x, d=2):
    """A number with `d` decimals and thousands separators."""
    return f"{x:,.{d}f}"


def i(x):
    return f"{round(x):,}"


def x(r, d=2):
    return f"{r:.{d}f}×"


def rng(vals, d=2):
    lo, hi = min(vals), max(vals)
    return x(lo, d) if f"{lo:.{d}f}" == f"{hi:.{d}f}" else f"{lo:.{d}f}–{hi:.{d}f}×"


def table(head, body, align=None):
    align = align or ["---"] + ["---:"] * (len(head) - 1)
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return "\n".join(out)


def keys(n):
    return f"{int(n):,}"


# --- engines by path, and scaling (scripts/scaling.sh) -----------------------

SCALING_NEW = "docs/scaling/scaling-4ef44e3.csv"
SCALING_100M = "docs/scaling/scaling-4031897.csv"
SCALING_FJALL_100M = "docs/scaling/scaling-fjall-100m-d1569a1.csv"
PATHS = [("fillrandom", "writes (`fillrandom`)"), ("readrandom", "hits (`readrandom`)"),
         ("readmissing", "misses (`readmissing`)")]


def scaling_rows():
    out = [dict(r, build="4ef44e3") for r in rows(SCALING_NEW)]
    out += [dict(r, build="4031897") for r in rows(SCALING_100M) if r["num"] == "100000000"]
    out += [dict(r, build="d1569a1") for r in rows(SCALING_FJALL_100M)]
    return out


def by(rs, *cols):
    return {tuple(r[c] for c in cols): r for r in rs}


def path_ratio(n, engine, bench):
    b = by(rows(SCALING_NEW), "num", "engine")
    return float(b[(n, engine)][bench + "_us"]) / float(b[(n, "sievedb")][bench + "_us"])


def by_path_table():
    b = by(rows(SCALING_NEW), "num", "engine")
    body = []
    for n in ("1000000", "10000000"):
        for bench, label in PATHS:
            s = float(b[(n, "sievedb")][bench + "_us"])
            cells = [keys(n), label, f(s, 3)]
            for e in ENGINES[1:]:
                o = float(b[(n, e)][bench + "_us"])
                cells.append(f"{f(o, 3)} ({x(o / s)})")
            body.append(cells)
    return table(["keys", "path", "sievedb µs/op"] + [f"{NAMES[e]} µs/op (÷ sievedb)" for e in ENGINES[1:]],
                 body, ["---:", "---", "---:", "---:", "---:", "---:"])


def by_path_range():
    vals = [path_ratio(n, e, bench) for n in ("1000000", "10000000") for e in ENGINES[1:]
            for bench, _ in PATHS]
    return rng(vals)


def readrandom_10m_rocksdb():
    return x(path_ratio("10000000", "rocksdb", "readrandom"))


def readrandom_10m_rocksdb_us():
    b = by(rows(SCALING_NEW), "num", "engine")
    return (f"{f(float(b[('10000000', 'sievedb')]['readrandom_us']), 3)} µs against "
            f"{f(float(b[('10000000', 'rocksdb')]['readrandom_us']), 3)} µs")


def scaling_table():
    body = []
    for r in sorted(scaling_rows(), key=lambda r: (int(r["num"]), ENGINES.index(r["engine"]))):
        body.append([keys(r["num"]), NAMES[r["engine"]], r["build"], f(num(r["fillrandom_us"]), 3),
                     f(num(r["waitforcompaction_s"]), 1), f(num(r["readrandom_us"]), 3),
                     f(num(r["readmissing_us"]), 3), i(num(r["fill_rss_kb"]) / 1024),
                     i(num(r["read_rss_kb"]) / 1024), f(num(r["write_amp"])),
                     i(num(r["disk_bytes"]) / 1e6), f(num(r["open_s"]))])
    return table(["keys", "engine", "build", "fillrandom µs", "wait s", "readrandom µs", "readmissing µs",
                  "fill peak RSS MB", "read peak RSS MB", "write amp", "disk MB", "open s"], body,
                 ["---:", "---", "---"] + ["---:"] * 9)


def scaling_100m_ratios():
    b = by(scaling_rows(), "num", "engine")
    n = "100000000"
    parts = []
    for bench, _ in PATHS:
        s = float(b[(n, "sievedb")][bench + "_us"])
        parts.append(f"{bench} " + ", ".join(
            f"{NAMES[e]} {x(float(b[(n, e)][bench + '_us']) / s)}" for e in ENGINES[1:]))
    return "; ".join(parts)


def scaling_growth():
    b = by(rows(SCALING_NEW), "num", "engine")
    lines = []
    for e in ENGINES:
        a, z = b[("1000000", e)], b[("10000000", e)]
        g = ", ".join(f"{bench} ×{f(float(z[bench + '_us']) / float(a[bench + '_us']))}"
                      for bench, _ in PATHS)
        lines.append(f"- {NAMES[e]}: {g} per op; write amplification {f(num(a['write_amp']))} → "
                     f"{f(num(z['write_amp']))}; fill peak RSS {i(num(a['fill_rss_kb']) / 1024)} → "
                     f"{i(num(z['fill_rss_kb']) / 1024)} MB.")
    return "\n".join(lines)


# --- empty lookups and one hash per lookup (paper 000) ----------------------

FIG6 = "docs/reproduction-large/fig6.csv"
TABLE2 = "docs/reproduction/table2.csv"


def pct(g):
    return f"{g * 100:+.0f}%"


def fig6_table():
    rs = rows(FIG6)
    b = by(rs, "device", "mode")
    body = []
    for dev in dict.fromkeys(r["device"] for r in rs):
        fl, lv = b[(dev, "filter")], b[(dev, "levels")]
        body.append([dev, f(num(fl["micros_per_op"]), 3), f(num(lv["micros_per_op"]), 3),
                     f"**{pct(num(fl['gain']))}** ({pct(num(fl['gain_min']))} … {pct(num(fl['gain_max']))})",
                     f"{f(num(fl['digests_per_lookup']))} / {f(num(lv['digests_per_lookup']))}",
                     f"{i(num(fl['hash_ns']))} / {i(num(lv['hash_ns']))}"])
    return table(["device", "`filter` µs", "`levels` µs", "gain (min … max)", "digests per lookup",
                  "hash ns"], body, ["---"] + ["---:"] * 5)


def fig6_gain(device):
    return pct(num(by(rows(FIG6), "device", "mode")[(device, "filter")]["gain"]))


def fig6_gain_page_cache():
    return fig6_gain("page cache")


def fig6_gain_pcie():
    return fig6_gain("emulated PCIe 10µs")


def fpr_table():
    body = [[r["filter"], f"{float(r['measured_fpr']) * 100:.3f}%", f"{float(r['theoretical_fpr']) * 100:.3f}%",
             x(float(r["measured_fpr"]) / float(r["theoretical_fpr"]), 3), f(num(r["ns_per_query"]), 1)]
            for r in rows(TABLE2)]
    return table(["hash (one digest, rotation)", "measured FPR", "theory", "measured ÷ theory",
                  "ns per query"], body)


def fpr_range():
    return rng([float(r["measured_fpr"]) / float(r["theoretical_fpr"]) for r in rows(TABLE2)], 3)


# --- filter memory under a budget -------------------------------------------

TABLE1 = "docs/reproduction-large/elastic-table1-d4ab1e8.csv"
POLICIES = ["uniform", "monkey", "elastic", "elastic-uniform", "skew-at-write", "unlimited (12 bits/key)"]
OPS_50K = "docs/reproduction-large/elastic-vs-uniform-ops-50k-c5f09f1.csv"
HOTSPOT = "docs/benchmarks/hotspot-moving-c5f09f1.csv"


def table1_median():
    """Device reads per Get per (popularity, column): the median row where the
    experiment wrote one, else its one repeat (the run had `--repeats 1`)."""
    out = {}
    for r in sorted(rows(TABLE1), key=lambda r: r["repeat"] == "median"):
        out[(r["distribution"], r["column"])] = float(r["device_reads_per_get"])
    return out


def policies_table():
    m = table1_median()
    body = []
    for pop, _ in POPS:
        cells = [pop] + [f(m[(pop, p)], 3) for p in POLICIES]
        cells.append(x(m[(pop, "uniform")] / m[(pop, "elastic")]))
        body.append(cells)
    return table(["Gets"] + [f"`{p}`" if "(" not in p else p for p in POLICIES] + ["`uniform` ÷ `elastic`"],
                 body)


def policies_elastic_vs_best():
    m = table1_median()
    vals = [m[(p, "elastic")] / min(m[(p, "monkey")], m[(p, "skew-at-write")]) for p, _ in POPS]
    return rng(vals)


def policies_uniform_vs_elastic():
    m = table1_median()
    return rng([m[(p, "uniform")] / m[(p, "elastic")] for p, _ in POPS])


def ops_pair_table():
    body = [[r["round"], f"{f(num(r['elastic_reads_per_get']), 3)} / {f(num(r['uniform_reads_per_get']), 3)}",
             f"{i(num(r['elastic_ops_per_sec_while_both_ran']))} / {i(num(r['uniform_ops_per_sec_while_both_ran']))}",
             f"**{x(num(r['elastic_ops_per_sec_while_both_ran']) / num(r['uniform_ops_per_sec_while_both_ran']))}**"]
            for r in rows(OPS_50K)]
    return table(["round", "device reads per Get: `elastic` / `uniform`",
                  "ops/s while both ran: `elastic` / `uniform`", "ratio"], body, ["---:", "---", "---", "---:"])


def ops_pair_range():
    return rng([num(r["elastic_ops_per_sec_while_both_ran"]) / num(r["uniform_ops_per_sec_while_both_ran"])
                for r in rows(OPS_50K)])


def hotspot_rows():
    rs = rows(HOTSPOT)
    base = {}
    out = []
    for r in rs:
        k = (r["tree_files"], r["hot_data_fraction"], r["moving_every"], r["alpha"], r["lookups"])
        if r["monkey"]:
            base[k] = min(float(r["monkey"]), float(r["skew_at_write"]))
        out.append((r, base[k] / float(r["elastic"])))
    return out


def hotspot_table():
    body = []
    for r, ratio in hotspot_rows():
        hot = f"{float(r['hot_data_fraction']) * 100:.0f}%, " + (
            f"moving every {int(r['moving_every']):,}" if r["moving_every"] else "still")
        if r["alpha"] != "0":
            hot += f", {float(r['alpha']) * 100:.0f}% present"
        if r["extra_flags"]:
            hot = f"the same, `{r['extra_flags']}`"
        body.append([f"{int(r['tree_files']):,}", hot, f"{int(r['lookups']):,}",
                     f(num(r["monkey"]), 3) if r["monkey"] else "",
                     f(num(r["skew_at_write"]), 3) if r["skew_at_write"] else "",
                     f(num(r["elastic"]), 3), f"**{x(ratio)}**" if ratio >= 1.3 else x(ratio)])
    return table(["files", "hot keys", "lookups", "`monkey`", "`skew-at-write`", "`elastic`",
                  "best static ÷ `elastic`"], body, ["---:", "---", "---:", "---:", "---:", "---:", "---:"])


def hotspot_best():
    return x(max(r for _, r in hotspot_rows()))


def hotspot_50k_fast():
    """`elastic` against the best static plan at 50,584 files, the range moving every 100,000."""
    return rng([ratio for r, ratio in hotspot_rows()
                if r["tree_files"] == "50584" and r["moving_every"] == "100000" and not r["extra_flags"]])


BUDGET_CPU = "docs/benchmarks/budget-lookup-instructions-1d4a3ce.csv"


def budget_cpu_ratio():
    rs = rows(BUDGET_CPU)
    return x(float(rs[1]["instructions_per_lookup"]) / float(rs[0]["instructions_per_lookup"]), 3)


def budget_cpu_table():
    rs = rows(BUDGET_CPU)
    base = float(rs[0]["instructions_per_lookup"])
    body = [[r["configuration"], i(float(r["instructions_per_lookup"])),
             x(float(r["instructions_per_lookup"]) / base, 3)] for r in rs]
    return table(["readmissing, page cache, every unit resident", "instructions per lookup (all threads)",
                  "÷ unlimited"], body, ["---", "---:", "---:"])


OPEN_BUDGET = "docs/benchmarks/open-budget-50k-d96bb5d.csv"
OPEN_INSTRUCTIONS = "docs/benchmarks/open-instructions-50k-d96bb5d.csv"
OPEN_BUILDS = ("2e5e72b", "d96bb5d")  # (before, after)
OPEN_POLICIES = ("none", "uniform", "monkey", "skew-at-write", "elastic", "elastic-uniform")


def open_budget_medians():
    rs = rows(OPEN_BUDGET)
    return {(b, w, p): statistics.median(float(r["wall_s"]) for r in rs
                                         if (r["binary"], r["what"], r["policy"]) == (b, w, p))
            for b in ("before", "after") for w in ("open", "open+1000") for p in OPEN_POLICIES}


def open_budget_table():
    m = open_budget_medians()
    before, after = OPEN_BUILDS
    body = [[f"`{p}`" if p != "none" else "no budget",
             f(m[("before", "open", p)]), f(m[("after", "open", p)]),
             f(m[("before", "open+1000", p)]), f(m[("after", "open+1000", p)]),
             x(m[("before", "open+1000", p)] / m[("before", "open+1000", "none")]),
             x(m[("after", "open+1000", p)] / m[("after", "open+1000", "none")])] for p in OPEN_POLICIES]
    return table(["4 bits/key budget", f"open, before ({before})", f"open, after ({after})",
                  "open + 1,000 lookups, before", "after", "before ÷ no budget", "after ÷ no budget"], body)


def open_budget_ratios(binary):
    m = open_budget_medians()
    return [m[(binary, "open+1000", p)] / m[(binary, "open+1000", "none")] for p in OPEN_POLICIES[1:]]


def open_budget_range():
    return rng(open_budget_ratios("after"))


def open_budget_before_range():
    return rng(open_budget_ratios("before"))


def open_budget_none_gap():
    """How far apart the two builds' no-budget medians of open + 1,000 lookups are."""
    m = open_budget_medians()
    a, b = m[("after", "open+1000", "none")], m[("before", "open+1000", "none")]
    return f"{abs(a / b - 1) * 100:.0f}%"


def open_budget_rss(binary):
    """The range over the budget policies of the median peak RSS of an open, MiB."""
    rs = rows(OPEN_BUDGET)
    med = [statistics.median(int(r["maxrss_kb"]) for r in rs
                             if (r["binary"], r["what"], r["policy"]) == (binary, "open", p)) / 1024
           for p in OPEN_POLICIES[1:]]
    lo, hi = min(med), max(med)
    return f"{lo:.0f}" if f"{lo:.0f}" == f"{hi:.0f}" else f"{lo:.0f}–{hi:.0f}"


def open_budget_rss_after():
    return open_budget_rss("after")


def open_budget_rss_before():
    return open_budget_rss("before")


def open_budget_rss_none():
    rs = rows(OPEN_BUDGET)
    return f"{statistics.median(int(r['maxrss_kb']) for r in rs if (r['binary'], r['what'], r['policy']) == ('after', 'open', 'none')) / 1024:.0f}"


def open_instructions():
    """Instructions per (build, policy) of one open and close."""
    return {(r["binary"], r["policy"]): int(r["instructions"]) for r in rows(OPEN_INSTRUCTIONS)}


def open_instructions_beyond(build, policy):
    m = open_instructions()
    return m[(build, policy)] - m[(build, "none")]


def open_instructions_table():
    before, after = OPEN_BUILDS
    m = open_instructions()
    body = [["no budget (the whole open)", f(m[(before, "none")] / 1e6, 0), f(m[(after, "none")] / 1e6, 0), ""]]
    for p in OPEN_POLICIES[1:]:
        b, a = open_instructions_beyond(before, p), open_instructions_beyond(after, p)
        body.append([f"`{p}` (beyond no budget)", f(b / 1e6, 0), f(a / 1e6, 0), x(a / b)])
    return table(["4 bits/key budget", f"million instructions, before ({before})", f"after ({after})",
                  "after ÷ before"], body)


def open_instructions_range():
    before, after = OPEN_BUILDS
    return rng([open_instructions_beyond(after, p) / open_instructions_beyond(before, p)
                for p in OPEN_POLICIES[1:]])


def open_instructions_share_range():
    """What each budget's plan adds to an open without one, after."""
    _, after = OPEN_BUILDS
    m = open_instructions()
    return rng([open_instructions_beyond(after, p) / m[(after, "none")] + 1 for p in OPEN_POLICIES[1:]])


# --- ElasticBF against LevelDB and RocksDB at scale --------------------------

SBS_LDB = "docs/reproduction-large/elastic-vs-leveldb-side-by-side-348394a.csv"
SBS_RDB = "docs/reproduction-large/elastic-vs-rocksdb-1m-c5f09f1.csv"
SBS_RDB_UNIFORM = "docs/reproduction-large/elastic-vs-rocksdb-uniform-1m-b55fccb.csv"
LDB8 = "docs/reproduction-large/leveldb8-vs-elastic-348394a.csv"
LDB, RDB = "leveldb (4 bits/key)", "rocksdb (4 bits/key)"


def baseline_ratios(col):
    m = table1_median()
    return [m[(p, col)] / m[(p, "elastic")] for p, _ in POPS]


def elastic_baselines_table():
    m = table1_median()
    body = []
    for pop, _ in POPS:
        e = m[(pop, "elastic")]
        body.append([pop, f(e, 3), f(m[(pop, LDB)], 3), f"**{x(m[(pop, LDB)] / e)}**",
                     x(PAPER_001_TABLE1[pop]), f(m[(pop, RDB)], 3), f"**{x(m[(pop, RDB)] / e)}**"])
    return table(["Gets", "`elastic` (4 bits/key budget)", "LevelDB 1.23, 4 bits/key", "LevelDB ÷ `elastic`",
                  "the paper's LevelDB ÷ ElasticBF", "RocksDB 7.8, 4 bits/key", "RocksDB ÷ `elastic`"], body)


def elastic_vs_leveldb():
    return rng(baseline_ratios(LDB))


def elastic_vs_rocksdb():
    return rng(baseline_ratios(RDB))


def side_by_side():
    ldb = {r["popularity"]: r for r in rows(SBS_LDB)}
    rdb = {r["popularity"]: r for r in rows(SBS_RDB) + rows(SBS_RDB_UNIFORM)}
    out = []
    for pop, key in POPS:
        lr, rr = ldb[key], rdb[key]
        out.append((pop, num(lr["sv_ops_per_sec"]), num(lr["ldb_ops_per_sec_while_both_ran"]),
                    num(rr["sv_ops_per_sec"]), num(rr["rdb_ops_per_sec_while_both_ran"])))
    return out


def side_by_side_table():
    body = [[p, i(sl), i(lw), f"**{x(sl / lw)}**", i(sr), i(rw), f"**{x(sr / rw)}**"]
            for p, sl, lw, sr, rw in side_by_side()]
    return table(["Gets", "`elastic` ops/s (beside LevelDB)", "LevelDB ops/s while both ran", "ratio",
                  "`elastic` ops/s (beside RocksDB)", "RocksDB ops/s while both ran", "ratio"], body)


def side_by_side_leveldb():
    return rng([sl / lw for _, sl, lw, _, _ in side_by_side()])


def side_by_side_rocksdb():
    return rng([sr / rw for _, _, _, sr, rw in side_by_side()])


def leveldb8_table():
    body = []
    for r in rows(LDB8):
        e = num(r["sv_reads_per_get"])
        body.append([r["popularity"], f(num(r["ldb8_requests_per_get"]), 3), f(e, 3),
                     f"**{x(num(r['ldb8_requests_per_get']) / e)}**"])
    return table(["Gets (zipf s)", "LevelDB at 8 bits/key: requests per Get", "`elastic` at 4: device reads per Get",
                  "LevelDB 8 ÷ `elastic` 4"], body)


def leveldb8_range():
    return rng([num(r["ldb8_requests_per_get"]) / num(r["sv_reads_per_get"]) for r in rows(LDB8)])


# --- Ribbon units (scripts/ribbon-units.sh) ------------------------------------

RIBBON_UNITS_BUDGET = "docs/benchmarks/ribbon-units-budget-3d14e63.csv"
RIBBON_UNITS_UNLIMITED = "docs/benchmarks/ribbon-units-unlimited-1f94cfa.csv"
RIBBON_TREES = [("bloom-units", "Bloom units"), ("ribbon-units", "Ribbon units"), ("mixed", "mixed"),
                ("chosen", "chosen")]


def _ribbon_budget():
    """policy -> tree -> (median device reads per Get, median ops/s over the
    rounds), in the CSV's order."""
    runs = {}
    for r in rows(RIBBON_UNITS_BUDGET):
        runs.setdefault(r["policy"], {}).setdefault(r["tree"], []).append(
            (float(r["device_reads"]) / float(r["reads"]), float(r["ops_per_sec"])))
    return {p: {t: (statistics.median(v[0] for v in vs), statistics.median(v[1] for v in vs))
                for t, vs in trees.items()} for p, trees in runs.items()}



def ribbon_units_budget_table():
    body = []
    for p, t in _ribbon_budget().items():
        cells = [f"`{p}`"]
        cells += [f(t[k][0], 3) for k, _ in RIBBON_TREES]
        cells += [x(t["bloom-units"][0] / t["ribbon-units"][0]), x(_chosen_vs_best(t), 3)]
        cells += [i(t[k][1]) for k, _ in RIBBON_TREES]
        body.append(cells)
    head = (["policy"] + [f"{n} reads/Get" for _, n in RIBBON_TREES]
            + ["Bloom ÷ Ribbon reads", "chosen ÷ better reads"]
            + [f"{n} ops/s" for _, n in RIBBON_TREES])
    return table(head, body)


def ribbon_units_read_ratio():
    return rng([t["bloom-units"][0] / t["ribbon-units"][0] for t in _ribbon_budget().values()])


def _chosen_vs_best(t):
    return t["chosen"][0] / min(t["bloom-units"][0], t["ribbon-units"][0])


def ribbon_units_chosen_vs_best():
    return rng([_chosen_vs_best(t) for t in _ribbon_budget().values()], 3)


def ribbon_units_chosen_worst_policy():
    b = _ribbon_budget()
    return f"`{max(b, key=lambda p: _chosen_vs_best(b[p]))}`"


def ribbon_units_chosen_ops():
    return rng([t["chosen"][1] / max(t["bloom-units"][1], t["ribbon-units"][1])
                for t in _ribbon_budget().values()])


def ribbon_units_mixed_vs_best():
    return rng([t["mixed"][0] / min(t["bloom-units"][0], t["ribbon-units"][0])
                for t in _ribbon_budget().values()])


def ribbon_units_files():
    # Every run opens every file once: its table-open reads.
    return i(max(float(r["table_open_reads"]) for r in rows(RIBBON_UNITS_BUDGET)))


def ribbon_units_miss_share():
    shares = [100 * float(r["block_cache_misses"]) / float(r["device_reads"]) for r in rows(RIBBON_UNITS_BUDGET)]
    return f"{min(shares):.0f}–{max(shares):.0f}%"


def ribbon_units_miss_ratio():
    misses = {}
    for r in rows(RIBBON_UNITS_BUDGET):
        misses.setdefault(r["policy"], {})[r["tree"]] = float(r["block_cache_misses"])
    return rng([t["bloom-units"] / t["ribbon-units"] for t in misses.values()])


def _ribbon_unlimited():
    """tree -> (median µs per op, filter bytes, false positives per lookup)."""
    rs = rows(RIBBON_UNITS_UNLIMITED)
    out = {}
    for t in dict.fromkeys(r["tree"] for r in rs):
        mine = [r for r in rs if r["tree"] == t]
        out[t] = (statistics.median(float(r["micros_per_op"]) for r in mine),
                  float(mine[0]["filter_memory_bytes"]),
                  float(mine[0]["filter_false_positives"]) / float(mine[0]["reads"]))
    return out


def ribbon_unlimited_table():
    u = _ribbon_unlimited()
    base = u["bloom8"]
    body = [[f"`{t}`", f(us, 2), x(us / base[0]), f(mem / 1e6, 2), x(mem / base[1]), f(100 * fp, 2) + "%"]
            for t, (us, mem, fp) in u.items()]
    return table(["tree", "µs per lookup (median)", "÷ bloom8", "filter MB", "÷ bloom8",
                  "false positives per lookup"], body)


# --- filter layouts (scripts/filter-layouts.sh) ------------------------------

FILTER_LAYOUTS = "docs/benchmarks/filter-layouts-dea6846.csv"


def _layouts():
    """(layout, bits/key asked) -> the row of its first repeat, with the
    medians of its build and query times over the repeats (the side-by-side
    rows; the FPR sweep's rows have repeat 0)."""
    rs = [r for r in rows(FILTER_LAYOUTS) if r["repeat"] != "0"]
    out = {}
    for key in dict.fromkeys((r["layout"], r["bits_per_key"]) for r in rs):
        mine = [r for r in rs if (r["layout"], r["bits_per_key"]) == key]
        row = dict(mine[0])
        row["build"] = statistics.median(float(r["build_ns_per_key"]) for r in mine)
        row["query"] = statistics.median(float(r["ns_per_query"]) for r in mine)
        row["repeats"] = len(mine)
        out[key] = row
    return out


def _sweep():
    return [r for r in rows(FILTER_LAYOUTS) if r["repeat"] == "0"]


def filter_layouts_table():
    body = []
    for (layout, bpk), r in _layouts().items():
        body.append([f"`{layout}`", bpk, f(float(r["bits_per_key_used"]), 3), r["k_or_r"],
                     f(100 * float(r["measured_fpr"]), 3) + "%", f(100 * float(r["theoretical_fpr"]), 3) + "%",
                     f(r["build"], 1), f(r["query"], 1), r["digests_per_query"]])
    return table(["layout", "bits/key asked", "bits/key used", "k (Bloom) or r (Ribbon)", "FPR measured",
                  "FPR theory", "build ns/key", "ns/query", "digests/query"], body,
                 ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"])


def filter_layouts_repeats():
    return str(min(r["repeats"] for r in _layouts().values()))


def ribbon_sweep_table():
    body = []
    for r in _sweep():
        m, t = float(r["measured_fpr"]), float(r["theoretical_fpr"])
        body.append([r["bits_per_key"], f(float(r["bits_per_key_used"]), 3), r["k_or_r"], f"{m:.4g}", f"{t:.4g}",
                     f"{100 * (m / t - 1):+.2f}%"])
    return table(["bits/key asked", "bits/key used", "r (base)", "FPR measured", "FPR theory", "off theory"], body)


def ribbon_sweep_max_off():
    return f(max(abs(100 * (float(r["measured_fpr"]) / float(r["theoretical_fpr"]) - 1)) for r in _sweep()), 2) + "%"


def ribbon_bits_for_bloom10():
    lay = _layouts()
    return f(float(lay[("ribbon", "7.2")]["bits_per_key_used"]), 2)


def ribbon64_bits_for_bloom10():
    lay = _layouts()
    return f(float(lay[("ribbon64", "7.7")]["bits_per_key_used"]), 2)


def ribbon_fpr_at_bloom10_bits():
    lay = _layouts()
    return (f"{f(100 * float(lay[('ribbon', '7.2')]['measured_fpr']), 3)}% against Bloom's "
            f"{f(100 * float(lay[('bloom', '10')]['measured_fpr']), 3)}%")


def _vs_blocked(layout, what):
    """Per bits/key, the median over repeats of the layout's time ÷ the
    blocked Bloom's in the same repeat (run next to it); the range of those."""
    col = {"build": "build_ns_per_key", "query": "ns_per_query"}[what]
    by = {(r["layout"], r["bits_per_key"], r["repeat"]): float(r[col])
          for r in rows(FILTER_LAYOUTS) if r["repeat"] != "0"}
    meds = []
    for b in ("4", "7", "10"):
        reps = [rep for (l, bb, rep) in by if l == layout and bb == b]
        meds.append(statistics.median(by[(layout, b, rep)] / by[("blocked", b, rep)] for rep in reps))
    return rng(meds)


def ribbon_vs_blocked_build():
    return _vs_blocked("ribbon", "build")


def ribbon_vs_blocked_query():
    return _vs_blocked("ribbon", "query")


def ribbon64_vs_blocked_build():
    return _vs_blocked("ribbon64", "build")


def ribbon64_vs_blocked_query():
    return _vs_blocked("ribbon64", "query")


# --- prefix seeks (scripts/prefix-seek.sh) ------------------------------------

PREFIX_SEEK = "docs/benchmarks/prefix-seek-0d7a217.csv"


def _prefix_seek():
    """micros/op per (prefix_len, engine, benchmark), in repeat order."""
    out = {}
    for r in rows(PREFIX_SEEK):
        out.setdefault((r["prefix_len"], r["engine"], r["benchmark"]), []).append(
            (int(r["repeat"]), float(r["micros_per_op"]), int(r["found"])))
    return {k: [v for _, v, _ in sorted(vs)] for k, vs in out.items()}


def _prefix_seek_median(pl, e, b):
    return statistics.median(_prefix_seek()[(pl, e, b)])


def prefix_seek_table():
    ps = _prefix_seek()
    found = {(r["prefix_len"], r["engine"], r["benchmark"]): r["found"] for r in rows(PREFIX_SEEK)}
    body = []
    for b in ("seekmissing", "seekrandom"):
        for e in ("sievedb", "rocksdb"):
            for pl, what in (("8", "prefix filters" if e == "sievedb" else "prefix Bloom"), ("none", "none")):
                v = ps[(pl, e, b)]
                body.append([f"`{b}`", NAMES[e], what, " / ".join(f(u, 2) for u in v), f(statistics.median(v), 2),
                             i(int(found[(pl, e, b)]))])
    return table(["benchmark", "engine", "prefix filter", "µs per seek, repeats 1 / 2 / 3", "median",
                  "seeks that found an entry (last repeat)"], body,
                 ["---", "---", "---", "---:", "---:", "---:"])


def prefix_seek_spread():
    ps = _prefix_seek()
    return rng([max(v) / min(v) for v in ps.values()], 1)


def prefix_seek_missing_gain():
    return x(_prefix_seek_median("none", "sievedb", "seekmissing") / _prefix_seek_median("8", "sievedb", "seekmissing"), 1)


def prefix_seek_missing_gain_per_repeat():
    ps = _prefix_seek()
    return rng([a / b for a, b in zip(ps[("none", "sievedb", "seekmissing")], ps[("8", "sievedb", "seekmissing")])], 1)


def prefix_seek_missing_vs_rocksdb():
    return x(_prefix_seek_median("8", "rocksdb", "seekmissing") / _prefix_seek_median("8", "sievedb", "seekmissing"))


def prefix_seek_random_ratio():
    return x(_prefix_seek_median("8", "sievedb", "seekrandom") / _prefix_seek_median("none", "sievedb", "seekrandom"))


# --- large files: two-level indexes (scripts/two-level-open.sh) -------------

TWO_LEVEL = "docs/benchmarks/two-level-open-3fa7da6.csv"
TWO_LEVEL_SHAPES = {"one": "one-level index, whole filters", "two": "two-level index, partitioned filters"}
TWO_LEVEL_RUNS = {"open": "1,000 uniform, cold", "cache8": "200k uniform", "equal": "200k uniform, equal memory",
                  "budget": "200k zipf 0.99, 5 bits/key budget",
                  "budgeteq": "200k zipf 0.99, 5 bits/key budget, equal memory"}


def _two_level(shape, run):
    return sorted((r for r in rows(TWO_LEVEL) if (r["shape"], r["run"]) == (shape, run)), key=lambda r: int(r["repeat"]))


def _two_level_mean(shape, run, col):
    return statistics.mean(float(r[col]) for r in _two_level(shape, run))


def two_level_table():
    body = []
    for run in TWO_LEVEL_RUNS:
        for shape in TWO_LEVEL_SHAPES:
            rs = _two_level(shape, run)
            if not rs:
                continue
            r = rs[0]
            body.append([TWO_LEVEL_RUNS[run], TWO_LEVEL_SHAPES[shape], f(int(r["block_cache_capacity"]) / 2**20, 1),
                         " / ".join(f(float(q["micros_per_op"]), 1) for q in rs),
                         f(float(r["engine_device_reads_per_op"]), 3), i(int(r["index_partition_reads"])),
                         i(int(r["filter_unit_reads"]))])
    return table(["lookups", "tree", "block cache, MiB", "µs per lookup, repeats", "device reads per lookup",
                  "index partition reads", "filter unit reads"], body,
                 ["---", "---", "---:", "---:", "---:", "---:", "---:"])


def two_level_files():
    return i(int(_two_level("one", "open")[0]["files"]))


def two_level_opens():
    return i(int(_two_level("one", "open")[0]["table_opens"]))


def _per_open(shape, col):
    r = _two_level(shape, "open")[0]
    return int(r[col]) / int(r["table_opens"])


def two_level_open_bytes_one():
    return i(_per_open("one", "table_open_bytes"))


def two_level_open_bytes_two():
    return i(_per_open("two", "table_open_bytes"))


def two_level_open_reads_one():
    return f(_per_open("one", "table_open_reads"), 0)


def two_level_open_reads_two():
    return f(_per_open("two", "table_open_reads"), 0)


def two_level_open_ratio():
    return x(_per_open("one", "table_open_bytes") / _per_open("two", "table_open_bytes"), 1)


def two_level_meta_one():
    return i(int(_two_level("one", "open")[0]["table_meta_bytes"]))


def two_level_meta_two():
    return i(int(_two_level("two", "open")[0]["table_meta_bytes"]))


def two_level_meta_ratio():
    one, two = (int(_two_level(s, "open")[0]["table_meta_bytes"]) for s in ("one", "two"))
    return x(one / two, 0)


def two_level_equal_cache():
    return f(int(_two_level("two", "equal")[0]["block_cache_capacity"]) / 2**20, 1)


def two_level_equal_time():
    return x(_two_level_mean("two", "equal", "micros_per_op") / _two_level_mean("one", "cache8", "micros_per_op"))


def two_level_cache8_time():
    return x(_two_level_mean("two", "cache8", "micros_per_op") / _two_level_mean("one", "cache8", "micros_per_op"))


def two_level_cache8_reads():
    return f(_two_level_mean("two", "cache8", "engine_device_reads_per_op"), 3)


def two_level_one_reads():
    return f(_two_level_mean("one", "cache8", "engine_device_reads_per_op"), 3)


def two_level_equal_reads():
    return f(_two_level_mean("two", "equal", "engine_device_reads_per_op"), 3)


def two_level_budget_reads_one():
    return f(_two_level_mean("one", "budget", "engine_device_reads_per_op"), 3)


def two_level_budget_reads_two():
    return f(_two_level_mean("two", "budget", "engine_device_reads_per_op"), 3)


def two_level_budgeteq_reads():
    return f(_two_level_mean("two", "budgeteq", "engine_device_reads_per_op"), 3)


def two_level_budgeteq_unit_reads():
    return f(_two_level_mean("two", "budgeteq", "filter_unit_reads") / _two_level_mean("two", "budgeteq", "reads"), 3)


def two_level_budget_unit_reads_one():
    return f(_two_level_mean("one", "budget", "filter_unit_reads") / _two_level_mean("one", "budget", "reads"), 3)


# --- keyspaces, merge, Python ------------------------------------------------

KEYSPACES = "docs/benchmarks/keyspaces-4d4a6a8.csv"
MERGE = "docs/benchmarks/mergerandom-f12bdb4.csv"
PYTHON = "docs/benchmarks/python-overhead-6ed3776.csv"
PYTHON_THREADS = "docs/benchmarks/python-threads-6ed3776.csv"


def keyspaces_table():
    rs = rows(KEYSPACES)
    body = []
    for bench in dict.fromkeys(r["benchmark"] for r in rs):
        for e in dict.fromkeys(r["engine"] for r in rs if r["benchmark"] == bench):
            four = [float(r["micros_per_op"]) for r in rs if (r["benchmark"], r["engine"], r["keyspaces"]) == (bench, e, "4")]
            one = [float(r["micros_per_op"]) for r in rs if (r["benchmark"], r["engine"], r["keyspaces"]) == (bench, e, "1")]
            body.append([f"`{bench}`", NAMES[e], " / ".join(f(v, 3) for v in four), f(one[0], 3),
                         x(statistics.median(four) / one[0])])
    return table(["benchmark", "engine", "4 keyspaces, runs 1 / 2 / 3", "1 keyspace",
                  "median of 4 ÷ 1"], body, ["---", "---", "---:", "---:", "---:"])


def merge_table():
    rs = rows(MERGE)
    body = []
    for e in dict.fromkeys(r["engine"] for r in rs):
        mine = [r for r in rs if r["engine"] == e]
        body.append([NAMES[e], " / ".join(f(num(r["micros_per_op"]), 3) for r in mine),
                     f(statistics.median(num(r["micros_per_op"]) for r in mine), 3),
                     i(statistics.median(num(r["ops_per_sec"]) for r in mine))])
    return table(["engine", "µs per merge (3 runs)", "median", "median ops/s"], body, ["---", "---:", "---:", "---:"])


def merge_ratio():
    rs = rows(MERGE)
    med = {e: statistics.median(num(r["micros_per_op"]) for r in rs if r["engine"] == e) for e in ("sievedb", "rocksdb")}
    return x(med["rocksdb"] / med["sievedb"])


PY_COLS = [("get_us", "get µs"), ("get_absent_us", "absent get µs"), ("put_us", "put µs"),
           ("batch_us", "batch µs/key"), ("scan_keys_per_sec", "scan keys/s"),
           ("may_exist_absent_us", "`key_may_exist` absent µs"), ("empty_db_get_us", "empty-db get µs")]


def python_ratios(col):
    """(engine, run, other's ÷ sievedb's) for a time column; for the scan
    rate, sievedb's ÷ other's: above 1 means sievedb is faster either way."""
    rs = rows(PYTHON)
    b = by(rs, "keys", "engine", "run")
    out = []
    for r in rs:
        s = b[(r["keys"], "sievedb", r["run"])]
        if r["engine"] == "sievedb" or num(r[col]) is None or num(s[col]) is None:
            continue
        v = float(s[col]) / float(r[col]) if col == "scan_keys_per_sec" else float(r[col]) / float(s[col])
        out.append((r["engine"], r["run"], v))
    return out


def python_table():
    rs = rows(PYTHON)
    body = []
    for r in rs:
        cells = [keys(r["keys"]), r["engine"], r["run"]]
        for c, _ in PY_COLS:
            v = num(r[c])
            cells.append("—" if v is None else i(v) if c == "scan_keys_per_sec" else f(v, 3))
        body.append(cells)
    return table(["keys", "engine", "run"] + [h for _, h in PY_COLS], body,
                 ["---:", "---", "---:"] + ["---:"] * len(PY_COLS))


def python_ratio_table():
    body = []
    for e in ("rocksdict", "plyvel"):
        cells = [e]
        for c, _ in PY_COLS[:5]:
            vals = [v for en, _, v in python_ratios(c) if en == e]
            cells.append(rng(vals) if vals else "—")
        body.append(cells)
    return table(["against"] + [h.replace(" µs/key", "").replace(" µs", "").replace(" keys/s", "")
                                for _, h in PY_COLS[:5]], body)


def python_may_exist_us():
    return f(max(num(r["may_exist_absent_us"]) for r in rows(PYTHON) if r["engine"] == "sievedb"), 3) + " µs"


def python_get_vs_rocksdict():
    return rng([v for e, _, v in python_ratios("get_us") if e == "rocksdict"])


def python_put_vs_rocksdict():
    return rng([v for e, _, v in python_ratios("put_us") if e == "rocksdict"])


def python_get_vs_plyvel():
    return rng([v for e, _, v in python_ratios("get_us") if e == "plyvel"])


def python_put_vs_plyvel():
    return rng([v for e, _, v in python_ratios("put_us") if e == "plyvel"])


def python_threads_table():
    body = []
    for r in rows(PYTHON_THREADS):
        body.append([f"`{r['benchmark']}`", r["engine"], r["run"], i(num(r["keys_per_sec_1_thread"])),
                     i(num(r["keys_per_sec_2_threads"])), x(num(r["scaling"]))])
    return table(["benchmark", "engine", "run", "keys/s, 1 thread", "keys/s, 2 threads", "2 threads ÷ 1"],
                 body, ["---", "---", "---:", "---:", "---:", "---:"])


# --- transactions and concurrent writers -------------------------------------

TXN = "docs/benchmarks/txnrandom-60c36bf.csv"
TXN_READ = "docs/benchmarks/txnreadrandom-60c36bf.csv"
YCSB_THREADS = "docs/benchmarks/ycsba-threads-60c36bf.csv"
DEFAULT_PATH = "docs/benchmarks/default-path-60c36bf.csv"
TXN_ENGINES = ["sievedb", "rocksdb", "fjall"]


def txn_commits():
    """Mean commits/s over the repeats, by (mode, contention, threads, engine)."""
    out = {}
    for r in rows(TXN):
        out.setdefault((r["txn_mode"], r["contention"], int(r["threads"]), r["engine"]), []).append(
            float(r["commits_per_sec"]))
    return {k: statistics.mean(v) for k, v in out.items()}


def txn_shapes():
    seen = dict.fromkeys((r["txn_mode"], r["contention"], int(r["threads"])) for r in rows(TXN))
    return sorted(seen, key=lambda k: (k[0] != "optimistic", k[1] != "low", k[2]))


def txn_table():
    c = txn_commits()
    body = []
    for mode, cont, t in txn_shapes():
        v = {e: c.get((mode, cont, t, e)) for e in TXN_ENGINES}
        body.append([mode, cont, t] + [i(v[e]) for e in TXN_ENGINES] +
                    [x(v["sievedb"] / v["rocksdb"]), x(v["sievedb"] / v["fjall"])])
    return table(["mode", "contention", "threads", "sievedb commits/s", "RocksDB", "fjall",
                  "sievedb ÷ RocksDB", "sievedb ÷ fjall"], body,
                 ["---", "---", "---:", "---:", "---:", "---:", "---:", "---:"])


def txn_detail_table():
    acc = {}
    for r in rows(TXN):
        acc.setdefault((r["txn_mode"], r["contention"], int(r["threads"]), r["engine"]), []).append(r)
    body = []
    for mode, cont, t in txn_shapes():
        for e in TXN_ENGINES:
            rs = acc.get((mode, cont, t, e), [])
            if not rs:
                continue
            mean = lambda col: statistics.mean(float(r[col]) for r in rs)
            body.append([mode, cont, t, NAMES[e], i(mean("aborts_per_sec")), f(mean("p50_us"), 1),
                         f(mean("p99_us"), 1), i(mean("max_us"))])
    return table(["mode", "contention", "threads", "engine", "aborts/s", "p50 µs", "p99 µs", "max µs"], body,
                 ["---", "---", "---:", "---", "---:", "---:", "---:", "---:"])


def txn_low_ratio(engine):
    c = txn_commits()
    vals = [c[(m, "low", t, "sievedb")] / c[(m, "low", t, engine)] for m, cont, t in txn_shapes() if cont == "low"]
    return rng(vals)


def txn_low_vs_rocksdb():
    return txn_low_ratio("rocksdb")


def txn_low_vs_fjall():
    return txn_low_ratio("fjall")


def txn_scaling_of(engine):
    c = txn_commits()
    parts = []
    for mode in ("optimistic", "pessimistic"):
        for cont, bench in (("low", "txnrandom"), ("high", "txnrandomhot")):
            parts.append(f"{mode} `{bench}` {x(c[(mode, cont, 2, engine)] / c[(mode, cont, 1, engine)])}")
    return ", ".join(parts)


def txn_scaling():
    return txn_scaling_of("sievedb")


def txn_scaling_rocksdb():
    return txn_scaling_of("rocksdb")


def txn_scaling_fjall():
    return txn_scaling_of("fjall")


def txn_read_pairs():
    """(engine, lookups per transaction, readrandom µs, txnreadrandom µs), in run order:
    each txnreadrandom row paired with its engine's readrandom row just before it."""
    out, last = [], {}
    for r in rows(TXN_READ):
        if r["benchmark"] == "readrandom":
            last[r["engine"]] = float(r["micros_per_op"])
        elif r["benchmark"] == "txnreadrandom" and r["engine"] in last:
            out.append((r["engine"], int(r["txn_keys"]), last.pop(r["engine"]), float(r["micros_per_op"])))
    return out


def txn_read_table():
    body = []
    pairs = txn_read_pairs()
    for e in TXN_ENGINES:
        for k in sorted({k for en, k, _, _ in pairs if en == e}):
            mine = [(a, b) for en, kk, a, b in pairs if (en, kk) == (e, k)]
            body.append([NAMES[e], k, " / ".join(f(a, 3) for a, _ in mine), " / ".join(f(b, 3) for _, b in mine),
                         " / ".join(x(b / a) for a, b in mine)])
    return table(["engine", "lookups per transaction", "`readrandom` µs (runs)", "`txnreadrandom` µs",
                  "ratio per run"], body, ["---", "---:", "---:", "---:", "---:"])


def txn_read_range():
    return rng([b / a for e, _, a, b in txn_read_pairs() if e == "sievedb"])


def ycsb_threads():
    acc = {}
    for r in rows(YCSB_THREADS):
        acc.setdefault((r["engine"], int(r["threads"])), []).append(float(r["ops_per_sec"]))
    return acc


def ycsb_threads_table():
    acc = ycsb_threads()
    body = []
    for e in ENGINES:
        if (e, 1) not in acc:
            continue
        one, two = acc[(e, 1)], acc[(e, 2)]
        body.append([NAMES[e], " / ".join(i(v) for v in one), " / ".join(i(v) for v in two),
                     x(statistics.median(two) / statistics.median(one))])
    return table(["engine", "ops/s, 1 thread (rounds)", "2 threads", "median 2 ÷ 1"], body,
                 ["---", "---:", "---:", "---:"])


def ycsb_threads_sievedb():
    acc = ycsb_threads()
    return x(statistics.median(acc[("sievedb", 2)]) / statistics.median(acc[("sievedb", 1)]))


THREADS_AB = "docs/benchmarks/ycsba-spin-94d16ba.csv"


def threads_ab_table():
    rs = rows(THREADS_AB)
    body = []
    for bench in ("ycsba", "fillrandom"):
        for b, label in (("base", "queueing at once (60c36bf without 94d16ba)"), ("new", "spinning first (60c36bf)")):
            one = [float(r["ops_per_sec"]) for r in rs if (r["benchmark"], r["build"], r["threads"]) == (bench, b, "1")]
            two = [float(r["ops_per_sec"]) for r in rs if (r["benchmark"], r["build"], r["threads"]) == (bench, b, "2")]
            body.append([f"`{bench}`", label, " / ".join(i(v) for v in one), " / ".join(i(v) for v in two),
                         x(statistics.median(two) / statistics.median(one))])
    return table(["benchmark", "writer", "ops/s, 1 thread (runs)", "2 threads", "median 2 ÷ 1"], body,
                 ["---", "---", "---:", "---:", "---:"])


def default_path_table():
    rs = rows(DEFAULT_PATH)
    body = []
    for bench in dict.fromkeys(r["benchmark"] for r in rs):
        runs = {b: [float(r["micros_per_op"]) for r in rs if (r["benchmark"], r["build"]) == (bench, b)]
                for b in ("base", "new")}
        body.append([f"`{bench}`", " / ".join(f(v, 3) for v in runs["base"]), " / ".join(f(v, 3) for v in runs["new"]),
                     f(statistics.median(runs["new"]) / statistics.median(runs["base"]))])
    return table(["µs per op (24 B keys, 100 B values)", "before (8889609), runs", "after (60c36bf), runs",
                  "median after ÷ before"], body, ["---", "---:", "---:", "---:"])


# --- device reads --------------------------------------------------------------

INSTRUMENT = "docs/benchmarks/device-reads-instrument-d38ea5a.csv"
READAHEAD = "docs/benchmarks/device-reads-readahead-d38ea5a.csv"


def instrument_table():
    body = []
    for r in rows(INSTRUMENT):
        g = int(r["gets"])
        body.append([f"`{r['benchmark']}`", f"{int(r['engine_count']):,} ({f(int(r['engine_count']) / g, 3)}/Get)",
                     f"{int(r['diskstats_requests']):,}",
                     f"{int(r['read_bytes_pages']):,} ({f(int(r['read_bytes_pages']) / g, 3)}/Get)"])
    return table(["benchmark (100,000 Gets)", "sievedb's own count", "diskstats read requests",
                  "`read_bytes` ÷ 4096"], body)


def readahead_table():
    rs = rows(READAHEAD)
    body = []
    for (e, ra) in dict.fromkeys((r["engine"], r["read_ahead_kb"]) for r in rs):
        mine = [r for r in rs if (r["engine"], r["read_ahead_kb"]) == (e, ra)]
        cells = [("sievedb, O_DIRECT" if e == "sievedb" else f"LevelDB, `read_ahead_kb` {ra}")]
        for bench in ("readrandom", "readmissing", "readmixed"):
            cells.append(", ".join(f(num(r[bench + "_requests"]), 3) for r in mine))
            cells.append(f(num(mine[0][bench + "_pages"]), 2))
        body.append(cells)
    return table(["engine", "readrandom requests/Get", "pages", "readmissing requests/Get", "pages",
                  "readmixed requests/Get", "pages"], body)


# --- the costs of durability --------------------------------------------------

WAL = "docs/benchmarks/wal-writes-3497493.csv"
OPEN7K = "docs/benchmarks/open-live-check-7k-c08bd71.csv"
OPEN50K = "docs/benchmarks/open-live-check-50k-c08bd71.csv"
REPAIR = "docs/benchmarks/repair-scan-c08bd71.csv"
BGT = "docs/benchmarks/background-threads-e50a847.csv"


def wal_table():
    rs = rows(WAL)
    body = []
    for bench, label in (("fillrandom", "fillrandom, 1M unsynced puts"),
                         ("fillsync", "fillrandom `--sync`, 20,000 puts, each fdatasync'd")):
        runs = {b: [float(r["micros_per_op"]) for r in rs if (r["benchmark"], r["build"]) == (bench, b)]
                for b in ("base", "new")}
        body.append([label, " / ".join(f(v, 3 if v < 10 else 2) for v in runs["base"]),
                     " / ".join(f(v, 3 if v < 10 else 2) for v in runs["new"]),
                     f(statistics.median(runs["new"]) / statistics.median(runs["base"]))])
    return table(["µs per put (24 B keys, 100 B values)", "before (ace8b8a + `--sync`), runs 1–5",
                  "after (3497493), runs 1–5", "median after ÷ before"], body, ["---", "---:", "---:", "---:"])


def open_table():
    body = []
    for path, label in ((OPEN7K, "7,228 files"), (OPEN50K, "50,584 files")):
        rs = rows(path)
        med = {(b, w): statistics.median(float(r["wall_s"]) for r in rs if (r["binary"], r["what"]) == (b, w))
               for b in ("before", "after") for w in ("open", "open+1000")}
        body.append([label, f(med[("before", "open")]), f(med[("after", "open")]),
                     f(med[("before", "open+1000")]), f(med[("after", "open+1000")])])
    return table(["tree", "open, before (ace8b8a)", "open, after (c08bd71)", "open + 1,000 lookups, before",
                  "after"], body)


def repair_table():
    body = [[r["table"] + (f" (found by the {r['found_by']})" if r["found_by"] else ""), f"{f(num(r['repair_s']))} s",
             f"{num(r['max_rss_mb']):g} MB", i(num(r["entries_lost"]))] for r in rows(REPAIR)]
    return table(["table of 58 MB", "repair", "max RSS", "entries lost"], body, ["---", "---:", "---:", "---:"])


def bg_threads_table():
    body = [[keys(r["keys"]), r["threads"], r["order"], f(num(r["fillrandom_us"]), 3), f(num(r["waitforcompaction_s"]), 1),
             f(num(r["fill_cpu_s"]), 1), f(num(r["readrandom_us"]), 3), f(num(r["readmissing_us"]), 3),
             i(num(r["rww_reads_per_sec"])), i(num(r["rww_writes_per_sec"]))] for r in rows(BGT)]
    return table(["keys", "threads", "order", "fillrandom µs", "waitforcompaction s", "fill CPU s",
                  "readrandom µs", "readmissing µs", "readwhilewriting reads/s", "its writes/s"], body)


def bg_threads_10m():
    rs = [r for r in rows(BGT) if r["keys"] == "10000000"]
    # Pairs side by side in the order 2 3 3 2: (1st, 2nd) and (4th, 3rd).
    o = {r["order"]: r for r in rs}
    pairs = [(o["1"], o["2"]), (o["4"], o["3"])]
    fill = [float(t["fillrandom_us"]) / float(two["fillrandom_us"]) for two, t in pairs]
    rww = [float(t["rww_reads_per_sec"]) / float(two["rww_reads_per_sec"]) for two, t in pairs]
    return (f"three threads filled in {' and '.join(x(v) for v in fill)} the time per put of the two-thread "
            f"load beside each, but the `readwhilewriting` reader did {' and '.join(x(v) for v in rww)} "
            f"the lookups per second")


# --- README's headline -------------------------------------------------------

def headline():
    e = table1_median()
    py = python_get_vs_rocksdict()
    return table(["", "figure", "measured in"], [
        ["Point lookups (`readrandom`), 10M keys, against RocksDB 7.8", f"**{readrandom_10m_rocksdb()}** faster "
         f"({readrandom_10m_rocksdb_us()})", "[BENCHMARKS.md: by path](BENCHMARKS.md#against-leveldb-rocksdb-and-fjall-by-path)"],
        ["Every path (writes, hits, misses), 1M and 10M keys, against LevelDB, RocksDB and fjall",
         f"{by_path_range()} faster", "[BENCHMARKS.md: by path](BENCHMARKS.md#against-leveldb-rocksdb-and-fjall-by-path)"],
        ["Empty lookups, one hash per lookup (`levels`) over one per filter, 22 GB tree in the page cache",
         f"**{fig6_gain_page_cache()}**", "[BENCHMARKS.md: empty lookups](BENCHMARKS.md#empty-lookups-and-one-hash-per-lookup)"],
        ["ElasticBF (`elastic`, 4 bits/key budget) against LevelDB at 4 bits/key, 43,844 files (the paper's ~50K)",
         f"**{elastic_vs_leveldb()}** fewer device reads; {side_by_side_leveldb()} LevelDB's ops/s read side by side",
         "[BENCHMARKS.md: ElasticBF at scale](BENCHMARKS.md#elasticbf-against-leveldb-and-rocksdb-at-43844-files)"],
        ["Transactions (`txnrandom`, 1M keys, 1–4 threads, both modes), against RocksDB's and fjall's",
         f"**{txn_low_vs_rocksdb()}** RocksDB's commits/s, {txn_low_vs_fjall()} fjall's",
         "[BENCHMARKS.md: transactions](BENCHMARKS.md#transactions)"],
        ["Python `get`, against rocksdict", f"**{py}** faster",
         "[BENCHMARKS.md: Python](BENCHMARKS.md#python-overhead-per-call)"],
    ], ["---", "---", "---"])


# --- the guide's figures ---------------------------------------------------------

# Phrases of the guide that quote a figure of BENCHMARKS.md: each must appear
# in its chapter (whitespace aside) with the figure the CSVs give, so a figure
# of the guide cannot drift from its data either.
GUIDE = [
    ("docs/guide/src/filter-budget.md", "`Elastic` reads {{policies_elastic_vs_best}} what Monkey"),
    ("docs/guide/src/filter-budget.md", "and `Uniform` {{policies_uniform_vs_elastic}} what `Elastic` reads"),
    ("docs/guide/src/filter-budget.md", "`Elastic` had {{ops_pair_range}} its ops/s"),
    ("docs/guide/src/filter-budget.md", "`Elastic` read {{hotspot_best}} less than the best static plan"),
    ("docs/guide/src/filter-budget.md", "over 50,584 files it was {{hotspot_50k_fast}}"),
    ("docs/guide/src/filter-budget.md", "`Elastic` makes {{elastic_vs_leveldb}} fewer device reads"),
    ("docs/guide/src/filter-budget.md", "{{budget_cpu_ratio}} the instructions of an unlimited lookup"),
    ("docs/guide/src/filters.md", "empty lookups gain {{fig6_gain_page_cache}} in the page cache"),
    ("docs/guide/src/filters.md", "FPR of 10 Bloom bits per key it needs {{ribbon_bits_for_bloom10}} bits, for about "
     "{{ribbon_vs_blocked_build}} the build time and {{ribbon_vs_blocked_query}} the probe time"),
    ("docs/guide/src/python.md", "`get` took {{python_get_vs_rocksdict}} sievedb's time in rocksdict, and `put` "
     "{{python_put_vs_rocksdict}}"),
]


def guide_drift():
    bad = []
    for path, phrase in GUIDE:
        want = " ".join(render(phrase).split())
        with open(os.path.join(ROOT, path)) as f:
            have = " ".join(f.read().split())
        if want not in have:
            bad.append(f"{path}: expected \"{want}\"")
    return bad


# --- rendering -----------------------------------------------------------------

# Runs of one build, one after the other; the table shows the run of median
# 16-client put ratio, the text every run's ratios.
CLUSTER_RUNS = [f"docs/benchmarks/cluster/bench-cluster-56f8b8b-run{n}.csv" for n in range(1, 6)]
SNAPSHOT_CATCHUP = "docs/benchmarks/snapshot-catchup-06af70b.csv"


def _cluster_median_run():
    """The index in CLUSTER_RUNS of the run of median 16-client put ratio
    (the lower median of an even count)."""
    order = sorted(range(len(CLUSTER_RUNS)), key=lambda n: _cluster_run_ratio(CLUSTER_RUNS[n], "put", "16"))
    return order[(len(order) - 1) // 2]


def cluster_median_run():
    return str(_cluster_median_run() + 1)


def cluster_rows():
    return {(r["target"], r["workload"], r["clients"]): r for r in rows(CLUSTER_RUNS[_cluster_median_run()])}


def cluster_points():
    return [(w, c) for w in ("put", "get") for c in ("1", "16", "64")
            if ("sievedb", w, c) in cluster_rows()]


def cluster_table():
    rs = cluster_rows()
    body = []
    for w, c in cluster_points():
        s, e = rs[("sievedb", w, c)], rs[("etcd", w, c)]
        row = [w, c, i(num(s["ops_per_sec"])), i(num(e["ops_per_sec"])),
               x(num(s["ops_per_sec"]) / num(e["ops_per_sec"])),
               f(num(s["p50_us"]) / 1000, 1), f(num(e["p50_us"]) / 1000, 1),
               f(num(s["p99_us"]) / 1000, 1), f(num(e["p99_us"]) / 1000, 1)]
        row += ([i(num(s["write_bytes_per_put"])), i(num(e["write_bytes_per_put"]))] if w == "put" else ["", ""])
        body.append(row)
    return table(["op", "clients", "sievedb ops/s", "etcd ops/s", "sievedb ÷ etcd",
                  "p50 ms sievedb", "p50 ms etcd", "p99 ms sievedb", "p99 ms etcd",
                  "bytes written/put sievedb", "etcd"], body,
                 ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"])


def cluster_put_ratios():
    rs = cluster_rows()
    return " and ".join(f"{x(num(rs[('sievedb', 'put', c)]['ops_per_sec']) / num(rs[('etcd', 'put', c)]['ops_per_sec']))}"
                        f" at {c}" for c in ("16", "64"))


def cluster_get_ratios():
    rs = cluster_rows()
    return " and ".join(f"{x(num(rs[('sievedb', 'get', c)]['ops_per_sec']) / num(rs[('etcd', 'get', c)]['ops_per_sec']))}"
                        f" at {c}" for c in ("16", "64"))


def _cluster_run_ratio(path, w, c):
    rs = {(r["target"], r["workload"], r["clients"]): r for r in rows(path)}
    return num(rs[("sievedb", w, c)]["ops_per_sec"]) / num(rs[("etcd", w, c)]["ops_per_sec"])


def cluster_runs():
    """The sievedb ÷ etcd put ratios of every run of CLUSTER_RUNS, at 16 and
    at 64 clients, in run order."""
    return "; ".join(f"at {c} clients " + ", ".join(x(_cluster_run_ratio(p, "put", c)) for p in CLUSTER_RUNS)
                     for c in ("16", "64"))


def cluster_runs_count():
    return str(len(CLUSTER_RUNS))


def cluster_failover():
    rs = cluster_rows()
    return (f"{i(num(rs[('sievedb', 'failover', '4')]['failover_ms']))} ms for sievedb-server and "
            f"{i(num(rs[('etcd', 'failover', '4')]['failover_ms']))} ms for etcd")


def snapshot_catchup():
    r = rows(SNAPSHOT_CATCHUP)[0]
    return (f"with {f(num(r['snapshot_bytes']) / 1e9, 2)} GB in the leader's snapshots/ (the two newest), the follower received and installed one "
            f"in {f(num(r['transfer_seconds']), 1)} s; the leader's RSS peaked at "
            f"{i(num(r['leader_peak_rss_kib']) / 1024)} MiB against {i(num(r['leader_steady_rss_kib']) / 1024)} MiB "
            f"steady ({r['peak_over_steady']}×)"
            + (f", its anonymous memory (RssAnon) at {i(num(r['leader_peak_rss_anon_kib']) / 1024)} MiB against "
               f"{i(num(r['leader_steady_rss_anon_kib']) / 1024)} MiB steady ({r['anon_peak_over_steady']}×)"
               if r.get("leader_peak_rss_anon_kib") else "")
            + f"; the follower's RSS peaked at {i(num(r['follower_peak_rss_kib']) / 1024)} MiB "
            f"({i(num(r['follower_peak_rss_anon_kib']) / 1024)} MiB anonymous)")


def render(text):
    def sub(m):
        name = m.group(1)
        fn = globals().get(name)
        if not callable(fn) or name.startswith("_"):
            sys.exit(f"benchmarks_md.py: unknown placeholder {{{{{name}}}}}")
        return fn()
    return re.sub(r"\{\{([a-z0-9_]+)\}\}", sub, text)


def render_readme(text):
    begin, end = "<!-- headline:begin -->\n", "<!-- headline:end -->"
    a, b = text.find(begin), text.find(end)
    if a < 0 or b < a:
        sys.exit("benchmarks_md.py: README.md has no headline block")
    return text[:a + len(begin)] + headline() + "\n" + text[b:]


def main():
    check = "--check" in sys.argv[1:]
    with open(TEMPLATE) as t:
        bench = render(t.read())
    with open(README) as r:
        readme_now = r.read()
    readme = render_readme(readme_now)
    bad = []
    for path, new in ((OUT, bench), (README, readme)):
        old = open(path).read() if os.path.exists(path) else ""
        if old != new:
            if check:
                bad.append(os.path.relpath(path, ROOT))
            else:
                with open(path, "w") as w:
                    w.write(new)
                print(f"wrote {os.path.relpath(path, ROOT)}")
    drift = guide_drift()
    if bad or drift:
        msg = []
        if bad:
            msg.append(f"{', '.join(bad)} differ from what the CSVs give: run scripts/benchmarks_md.py and commit")
        if drift:
            msg.append("the guide quotes figures the CSVs no longer give (edit the chapter):\n" + "\n".join(drift))
        sys.exit("\n".join(msg))
    if check:
        print("BENCHMARKS.md, README.md's headline and the guide's figures match the CSVs")


if __name__ == "__main__":
    main()

"""Compare filter memory policies under one budget on a zipfian workload.

A researcher's script: load one tree, then for each policy reopen it under
a filter memory budget, run the same zipfian lookups (half for absent
keys), and count the device reads each policy caused (block-cache misses +
filter unit loads + table-open reads, from `Db.stats()`). Plots a bar chart
with matplotlib when it is installed (skip with --no-plot).

    python examples/filter_policies.py --keys 200000 --lookups 100000
"""

import argparse
import bisect
import itertools
import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import sievedb

TREE: dict[str, Any] = dict(
    write_buffer_size=256 << 10,
    target_file_size=64 << 10,
    level1_size=256 << 10,
    layout="units",
    units=6,
    bits_per_key=12.0,  # 6 units of 2 bits per key on disk
    block_cache_capacity=1 << 20,
)


def key(i: int) -> bytes:
    return b"user%010d" % i


def zipf_sampler(n: int, s: float, rng: random.Random) -> Callable[[], int]:
    """Draws ranks 0..n-1 with P(r) ~ 1/(r+1)^s; rank r is key r * 7919 % n
    (the hot keys spread over the tree, as real hot keys are)."""
    cum = list(itertools.accumulate(1.0 / (r + 1) ** s for r in range(n)))
    total = cum[-1]

    def draw() -> int:
        r = bisect.bisect_left(cum, rng.random() * total)
        return (min(r, n - 1) * 7919) % n

    return draw


def device_reads(stats: dict[str, Any]) -> int:
    return int(stats["block_cache_misses"] + stats["filter_unit_loads"] + stats["table_open_reads"])


def run(path: Path, policy: str, args: argparse.Namespace) -> dict[str, Any]:
    opts = dict(TREE, filter_memory_bits_per_key=args.budget, filter_policy=policy)
    hotness = path / "HOTNESS"
    if hotness.exists():
        hotness.unlink()  # every policy starts cold
    rng = random.Random(args.seed)
    draw = zipf_sampler(args.keys, args.zipf, rng)
    with sievedb.Db(path, **opts) as db:
        before = db.stats()
        t0 = time.perf_counter()
        found = 0
        for _ in range(args.lookups):
            k = key(draw())
            if rng.random() < 0.5:
                k += b"-absent"
            found += db.get(k) is not None
        seconds = time.perf_counter() - t0
        after = db.stats()
    return {
        "policy": policy,
        "lookups": args.lookups,
        "found": found,
        "device_reads_per_lookup": (device_reads(after) - device_reads(before)) / args.lookups,
        "filter_memory_bytes": after["filter_memory_bytes"],
        "filter_memory_budget_bytes": after["filter_memory_budget_bytes"],
        "lookups_per_sec": args.lookups / seconds,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--keys", type=int, default=200_000)
    p.add_argument("--lookups", type=int, default=100_000)
    p.add_argument("--zipf", type=float, default=0.99)
    p.add_argument("--budget", type=float, default=4.0, help="filter memory, bits per key")
    p.add_argument("--policies", default="uniform,elastic")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--dir", help="where to build the tree (default: a temporary directory)")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args()

    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="sievedb-policies-"))
    path = work / "db"
    try:
        with sievedb.Db(path, **TREE) as db:
            for i in range(args.keys):
                db.put(key(i), b"v" * 100)
            db.flush()
            db.wait_for_compactions()
        results = [run(path, policy, args) for policy in args.policies.split(",")]
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)

    if args.json:
        print(json.dumps(results))
    else:
        for r in results:
            print(
                f"{r['policy']:>15}: {r['device_reads_per_lookup']:.3f} device reads per lookup, "
                f"{r['lookups_per_sec']:.0f} lookups/s, filter memory "
                f"{r['filter_memory_bytes']} of {r['filter_memory_budget_bytes']} bytes"
            )
    if not args.no_plot:
        try:
            import matplotlib.pyplot as plt  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            print("matplotlib is not installed: no plot (pip install matplotlib)")
            return
        fig, ax = plt.subplots()
        ax.bar([r["policy"] for r in results], [r["device_reads_per_lookup"] for r in results])
        ax.set_ylabel("device reads per lookup")
        ax.set_title(f"zipf {args.zipf}, {args.budget} bits/key of filter memory")
        fig.savefig("filter_policies.png", dpi=120)
        print("wrote filter_policies.png")


if __name__ == "__main__":
    main()

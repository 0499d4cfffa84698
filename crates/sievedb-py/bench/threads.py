"""Two Python threads against one: how much of each call releases the GIL.
sievedb vs rocksdict (RocksDB) and plyvel (LevelDB), same process, same data.

    pip install rocksdict plyvel   # the baselines; a missing one is skipped
    python bench/threads.py [--keys 200000] [--seconds 2] [--csv FILE]

On a database of --keys keys of 16 B with --value-size B values, loaded and
compacted whole, every key read once before: `multi_get` of --batch random
present keys (plyvel has no multi-get: a loop of `get`), and full scans
through the engine's iterator. Each is run for --seconds on 1 thread, then on
2 threads at once; the figure is the calls (keys) per second of all threads
together, and `scaling` is 2 threads' ÷ 1 thread's (2.0 would be perfect; a
binding that holds the GIL through its engine call stays near 1.0 or below).
"""

import argparse
import csv
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from overhead import ENGINES, key


def multi_get(e):
    db = e.db
    if e.name == "sievedb":
        return db.multi_get
    if e.name == "rocksdict":
        return db.get  # a list of keys: RocksDB's MultiGet
    get = db.get
    return lambda keys: [get(k) for k in keys]


def rate(threads, seconds, work):
    """Units of work per second of `threads` threads each running `work()`
    (which returns the units it did) until `seconds` pass."""
    done = [0] * threads
    stop = time.perf_counter() + seconds
    start = threading.Barrier(threads + 1)

    def run(i):
        start.wait()
        while time.perf_counter() < stop:
            done[i] += work()

    ts = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    t0 = time.perf_counter()
    start.wait()
    for t in ts:
        t.join()
    return sum(done) / (time.perf_counter() - t0)


def measure(engine_cls, work_dir, args):
    e = engine_cls(work_dir / engine_cls.name)
    value = b"v" * args.value_size
    for i in range(args.keys):
        e.put(key(i), value)
    e.settle()
    mg = multi_get(e)
    rng = random.Random(1)
    lists = [[key(rng.randrange(args.keys)) for _ in range(args.batch)] for _ in range(256)]
    for ks in lists:
        mg(ks)
    e.scan()
    pick = iter(range(1 << 62))

    def one_multi_get():
        mg(lists[next(pick) % len(lists)])
        return args.batch

    rows = []
    for bench, work in (("multi_get", one_multi_get), ("scan", e.scan)):
        one = rate(1, args.seconds, work)
        two = rate(2, args.seconds, work)
        rows.append({"engine": e.name, "benchmark": bench, "keys_per_sec_1_thread": one,
                     "keys_per_sec_2_threads": two, "scaling": two / one})
    e.close()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=200_000)
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--batch", type=int, default=100, help="keys per multi_get")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--run", type=int, default=1, help="the run number written to the CSV")
    ap.add_argument("--csv", help="append the rows to this CSV file")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sievedb-threads-"))
    results, skipped = [], []
    try:
        for cls in ENGINES:
            try:
                results += measure(cls, work, args)
            except ImportError as err:
                skipped.append(f"{cls.name} ({err})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.keys} keys, multi_get of {args.batch}, {args.seconds} s per figure")
    print("| benchmark | engine | keys/s, 1 thread | keys/s, 2 threads | scaling |")
    print("|---|---|---:|---:|---:|")
    for r in results:
        print(f"| {r['benchmark']} | {r['engine']} | {r['keys_per_sec_1_thread']:,.0f} | "
              f"{r['keys_per_sec_2_threads']:,.0f} | {r['scaling']:.2f} |")
    for s in skipped:
        print(f"skipped: {s}", file=sys.stderr)
    if args.csv:
        cols = ["keys_per_sec_1_thread", "keys_per_sec_2_threads", "scaling"]
        new = not Path(args.csv).exists()
        with open(args.csv, "a", newline="") as f:
            w = csv.writer(f)
            if new:
                w.writerow(["keys", "benchmark", "engine", "run"] + cols)
            for r in results:
                w.writerow([args.keys, r["benchmark"], r["engine"], args.run] + [f"{r[c]:.4f}" for c in cols])


if __name__ == "__main__":
    main()

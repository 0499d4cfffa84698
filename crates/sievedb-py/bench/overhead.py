"""Per-call overhead from Python: sievedb vs rocksdict (RocksDB) and plyvel
(LevelDB), same process, same data.

    pip install rocksdict plyvel   # the baselines; a missing one is skipped
    python bench/overhead.py [--keys 100000] [--ops 200000] [--repeats 3]

For each engine: `get` of a resident key (every key read once before, so
the reads are served from memory: memtable, block cache or page cache),
`put` of a new value to an existing key (after the load, each engine
compacts its whole tree, so no compaction runs while the gets are timed), a scan of every key through the
engine's iterator, and `get` of one absent key in a new, empty database
(almost nothing but the binding's own cost). Prints a table (µs per call, best of --repeats) and
the same as JSON (--json).
"""

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path


def key(i):
    return b"%016d" % i


class Sievedb:
    name = "sievedb"

    def __init__(self, path):
        import sievedb

        self.db = sievedb.Db(path)
        self.get, self.put = self.db.get, self.db.put

    def scan(self):
        return sum(1 for _ in self.db.items())

    def settle(self):
        self.db.compact_range()
        self.db.wait_for_compactions()

    def close(self):
        self.db.close()


class Rocksdict:
    name = "rocksdict"

    def __init__(self, path):
        import rocksdict

        self.db = rocksdict.Rdict(str(path))
        self.get, self.put = self.db.get, self.db.put

    def scan(self):
        return sum(1 for _ in self.db.items())

    def settle(self):
        self.db.compact_range(None, None)

    def close(self):
        self.db.close()


class Plyvel:
    name = "plyvel"

    def __init__(self, path):
        import plyvel

        self.db = plyvel.DB(str(path), create_if_missing=True)
        self.get, self.put = self.db.get, self.db.put

    def scan(self):
        return sum(1 for _ in self.db.iterator())

    def settle(self):
        self.db.compact_range()

    def close(self):
        self.db.close()


def best(repeats, f):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def measure(engine_cls, work, args):
    path = work / engine_cls.name
    e = engine_cls(path)
    value = b"v" * args.value_size
    for i in range(args.keys):
        e.put(key(i), value)
    e.settle()  # no compaction left to run while the gets are timed
    rng = random.Random(1)
    order = [key(rng.randrange(args.keys)) for _ in range(args.ops)]
    get, put = e.get, e.put
    for k in order:  # warm: every key read is resident
        get(k)

    def gets():
        for k in order:
            get(k)

    def puts():
        for k in order:
            put(k, value)

    g = best(args.repeats, gets)
    p = best(args.repeats, puts)
    n = e.scan()
    s = best(args.repeats, e.scan)
    e.close()
    empty = engine_cls(work / (engine_cls.name + "-empty"))
    absent, eget = key(-1), empty.get

    def absent_gets():
        for _ in range(args.ops):
            eget(absent)

    a = best(args.repeats, absent_gets)
    empty.close()
    return {
        "engine": engine_cls.name,
        "get_us": g / args.ops * 1e6,
        "put_us": p / args.ops * 1e6,
        "scan_keys": n,
        "scan_keys_per_sec": n / s,
        "empty_get_us": a / args.ops * 1e6,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=100_000)
    ap.add_argument("--ops", type=int, default=200_000)
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sievedb-overhead-"))
    results, skipped = [], []
    try:
        for cls in (Sievedb, Rocksdict, Plyvel):
            try:
                results.append(measure(cls, work, args))
            except ImportError as err:
                skipped.append(f"{cls.name} ({err})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = results[0]
    print(f"{args.keys} keys of 16 B, {args.value_size} B values, {args.ops} calls, best of {args.repeats}")
    print("| engine | get µs | put µs | scan keys/s | empty-db get µs | get ÷ sievedb | put ÷ sievedb |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['engine']} | {r['get_us']:.3f} | {r['put_us']:.3f} | {r['scan_keys_per_sec']:,.0f} | "
            f"{r['empty_get_us']:.3f} | "
            f"{r['get_us'] / base['get_us']:.2f}x | {r['put_us'] / base['put_us']:.2f}x |"
        )
    for s in skipped:
        print(f"skipped: {s}", file=sys.stderr)
    if args.json:
        print(json.dumps({"settings": vars(args), "results": results, "skipped": skipped}))


if __name__ == "__main__":
    main()

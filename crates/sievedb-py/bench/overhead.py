"""Per-call cost from Python: sievedb vs rocksdict (RocksDB) and plyvel
(LevelDB), same process, same data.

    pip install rocksdict plyvel   # the baselines; a missing one is skipped
    python bench/overhead.py [--keys 200000] [--ops 200000] [--repeats 5] [--csv FILE]

For each engine, on a database of --keys keys of 16 B with --value-size B
values, loaded and then compacted whole (so no compaction runs while calls
are timed), every key read once before (warm: the reads are served from
memory, i.e. memtable, block cache or page cache):

- `get` of a present key (`get_us`) and of an absent one (`get_absent_us`:
  keys never written, between and beyond the written ones, so the filters
  answer);
- `put` of a new value to an existing key (`put_us`);
- a batch of --batch puts written at once, per key (`batch_us`);
- a scan of every key through the engine's iterator (`scan_keys_per_sec`);
- `key_may_exist` of an absent key (`may_exist_absent_us`; plyvel has no
  such call);
- `get` of one absent key in a new, empty database (`empty_db_get_us`:
  almost nothing but the binding's own cost).

Each figure is the median of --repeats timed passes over the same keys.
Prints a table (µs per call) and writes one CSV row per engine with --csv.
"""

import argparse
import csv
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def key(i):
    return b"%016d" % i


def absent_key(i):
    # Sorts between the written keys (their 16 digits, then a suffix), so
    # a lookup cannot stop at a file's key range: only the filter answers.
    return b"%016d!" % i


class Sievedb:
    name = "sievedb"

    def __init__(self, path):
        import sievedb

        self.mod = sievedb
        self.db = sievedb.Db(path)
        self.get, self.put = self.db.get, self.db.put
        self.may_exist = getattr(self.db, "key_may_exist", None)

    def write_batch(self, pairs):
        b = self.mod.WriteBatch()
        for k, v in pairs:
            b.put(k, v)
        self.db.write(b)

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

        self.mod = rocksdict
        # Raw bytes in and out, as sievedb's and plyvel's (rocksdict
        # pickles by default).
        opts = rocksdict.Options(raw_mode=True)
        self.db = rocksdict.Rdict(str(path), options=opts)
        self.get, self.put = self.db.get, self.db.put
        self.may_exist = self.db.key_may_exist

    def write_batch(self, pairs):
        b = self.mod.WriteBatch(raw_mode=True)
        for k, v in pairs:
            b.put(k, v)
        self.db.write(b)

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
        self.may_exist = None

    def write_batch(self, pairs):
        with self.db.write_batch() as b:
            for k, v in pairs:
                b.put(k, v)

    def scan(self):
        return sum(1 for _ in self.db.iterator())

    def settle(self):
        self.db.compact_range()

    def close(self):
        self.db.close()


ENGINES = (Sievedb, Rocksdict, Plyvel)


def median_time(repeats, f):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def per_call(repeats, calls, f, keys):
    def run():
        for k in keys:
            f(k)

    return median_time(repeats, run) / calls * 1e6


def measure(engine_cls, work, args):
    path = work / engine_cls.name
    e = engine_cls(path)
    value = b"v" * args.value_size
    for i in range(args.keys):
        e.put(key(i), value)
    e.settle()
    rng = random.Random(1)
    present = [key(rng.randrange(args.keys)) for _ in range(args.ops)]
    absent = [absent_key(rng.randrange(args.keys)) for _ in range(args.ops)]
    for k in present:  # warm
        e.get(k)
    for k in absent:
        e.get(k)
    out = {"engine": engine_cls.name}
    out["get_us"] = per_call(args.repeats, args.ops, e.get, present)
    out["get_absent_us"] = per_call(args.repeats, args.ops, e.get, absent)
    put, n = e.put, args.ops
    out["put_us"] = median_time(args.repeats, lambda: [put(k, value) for k in present]) / n * 1e6
    batches = [
        [(k, value) for k in present[i : i + args.batch]] for i in range(0, len(present), args.batch)
    ]
    out["batch_us"] = median_time(args.repeats, lambda: [e.write_batch(b) for b in batches]) / n * 1e6
    e.settle()
    keys_scanned = e.scan()
    out["scan_keys_per_sec"] = keys_scanned / median_time(args.repeats, e.scan)
    out["may_exist_absent_us"] = (
        per_call(args.repeats, args.ops, e.may_exist, absent) if e.may_exist else None
    )
    e.close()
    empty = engine_cls(work / (engine_cls.name + "-empty"))
    one = [key(-1)] * args.ops
    out["empty_db_get_us"] = per_call(args.repeats, args.ops, empty.get, one)
    empty.close()
    return out


COLUMNS = ["get_us", "get_absent_us", "put_us", "batch_us", "scan_keys_per_sec",
           "may_exist_absent_us", "empty_db_get_us"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=200_000)
    ap.add_argument("--ops", type=int, default=200_000)
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--batch", type=int, default=100, help="puts per batch")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--run", type=int, default=1, help="the run number written to the CSV")
    ap.add_argument("--csv", help="append one row per engine to this CSV file")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sievedb-overhead-"))
    results, skipped = [], []
    try:
        for cls in ENGINES:
            try:
                results.append(measure(cls, work, args))
            except ImportError as err:
                skipped.append(f"{cls.name} ({err})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = results[0]

    def cell(r, c):
        v = r[c]
        if v is None:
            return "—"
        return f"{v:,.0f}" if c == "scan_keys_per_sec" else f"{v:.3f}"

    print(f"{args.keys} keys of 16 B, {args.value_size} B values, {args.ops} calls, "
          f"batches of {args.batch}, median of {args.repeats}")
    print("| engine | get µs | absent get µs | put µs | batch µs/key | scan keys/s | "
          "key_may_exist absent µs | empty-db get µs |")
    print("|---|" + "---:|" * len(COLUMNS))
    for r in results:
        print("| " + r["engine"] + " | " + " | ".join(cell(r, c) for c in COLUMNS) + " |")
    print("sievedb's advantage (other's time ÷ sievedb's; scans: sievedb's rate ÷ other's):")
    for r in results[1:]:
        ratios = []
        for c in COLUMNS:
            if r[c] is None or base[c] is None:
                continue
            v = base[c] / r[c] if c == "scan_keys_per_sec" else r[c] / base[c]
            ratios.append(f"{c} {v:.2f}x")
        print(f"  {r['engine']}: " + ", ".join(ratios))
    for s in skipped:
        print(f"skipped: {s}", file=sys.stderr)
    if args.csv:
        new = not Path(args.csv).exists()
        with open(args.csv, "a", newline="") as f:
            w = csv.writer(f)
            if new:
                w.writerow(["keys", "engine", "run"] + COLUMNS)
            for r in results:
                w.writerow([args.keys, r["engine"], args.run]
                           + ["" if r[c] is None else f"{r[c]:.4f}" for c in COLUMNS])


if __name__ == "__main__":
    main()

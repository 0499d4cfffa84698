"""The cost of a put by how the WAL is written, side by side in one
process: the default (a preallocated WAL written through a shared map, no
system call per unsynced put) against `wal_recovery="absolute-consistency"`
(the WAL written with write(2), one system call per put), unsynced and
synced (fdatasync per put).

    python bench/wal_modes.py [--puts 200000] [--synced-puts 2000] [--repeats 3]

Prints µs per put for each mode, repeat by repeat (interleaved), and the
ratio of the medians.
"""

import argparse
import shutil
import statistics
import tempfile
import time

import sievedb

MODES = ("point-in-time", "absolute-consistency")


def run(mode, sync, n):
    d = tempfile.mkdtemp(prefix="sievedb-wal-")
    try:
        with sievedb.Db(d, wal_recovery=mode) as db:
            v = b"v" * 100
            t = time.perf_counter()
            for i in range(n):
                db.put(b"%016d" % i, v, sync=sync)
            return (time.perf_counter() - t) / n * 1e6
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--puts", type=int, default=200_000)
    p.add_argument("--synced-puts", type=int, default=2_000)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    res = {(m, s): [] for m in MODES for s in (False, True)}
    print(f"16 B keys, 100 B values; {a.puts} puts, {a.synced_puts} synced puts per run")
    for r in range(a.repeats):
        for m in MODES:
            put = run(m, False, a.puts)
            synced = run(m, True, a.synced_puts)
            res[(m, False)].append(put)
            res[(m, True)].append(synced)
            print(f"run {r + 1}: {m:<21} put {put:.3f} µs, synced put {synced:.1f} µs", flush=True)
    for s, name in ((False, "put"), (True, "synced put")):
        mapped = statistics.median(res[(MODES[0], s)])
        written = statistics.median(res[(MODES[1], s)])
        print(f"{name}: write(2) WAL ÷ mapped WAL = {written / mapped:.2f}x (medians {written:.3f} / {mapped:.3f} µs)")


if __name__ == "__main__":
    main()

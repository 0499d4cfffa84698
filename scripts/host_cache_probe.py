#!/usr/bin/env python3
"""Does something below this machine cache its disk? Times random O_DIRECT reads.

    scripts/host_cache_probe.py DIR SUFFIX [N] [SEED]

Reads N (default 2000) random 4 KiB blocks with O_DIRECT from the files of
DIR whose names end in SUFFIX (e.g. `.sst`, `.ldb`), then the same blocks
again, and prints the latency of each pass (mean, p50, p90, p99). O_DIRECT
skips this machine's page cache, so on bare metal both passes cost a device
read each. On a virtual machine whose host caches the virtual disk, the
second pass is served from the host's memory and is several times faster;
then a benchmark's device reads do not all cost the same, and a run that
repeats an earlier run's reads (same seed, same hot keys) is faster than
the first (docs/history.md, "Measuring on a shared VM"). Feeds the guide's
"Benchmarking" chapter (why engines are read side by side). Takes seconds.
Use a SEED no earlier probe used on DIR, or the first pass is cached too.
"""
import mmap
import os
import random
import statistics
import sys
import time


def timed_pass(blocks, buf):
    lat = []
    for path, off in blocks:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        try:
            t = time.perf_counter()
            os.preadv(fd, [buf], off)
            lat.append(time.perf_counter() - t)
        finally:
            os.close(fd)
    lat.sort()
    n = len(lat)
    us = lambda x: f"{x * 1e6:.0f} µs"
    return (f"mean {us(statistics.mean(lat))}, p50 {us(lat[n // 2])}, "
            f"p90 {us(lat[n * 9 // 10])}, p99 {us(lat[n * 99 // 100])}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    d, suffix = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    files = [os.path.join(d, f) for f in os.listdir(d) if f.endswith(suffix)]
    sizes = {f: os.path.getsize(f) for f in files}
    files = [f for f in files if sizes[f] >= 4096]
    if not files or n < 1:
        sys.exit(f"no file of at least 4 KiB ending in {suffix} in {d}, or N < 1")
    rng = random.Random(seed)
    blocks = []
    for _ in range(n):
        f = rng.choice(files)
        blocks.append((f, rng.randrange(sizes[f] // 4096) * 4096))
    buf = mmap.mmap(-1, 4096)  # page-aligned, as O_DIRECT needs
    print(f"{d}: {len(files)} files, {n} random 4 KiB O_DIRECT reads, seed {seed}")
    print(f"  first pass:  {timed_pass(blocks, buf)}")
    print(f"  same blocks: {timed_pass(blocks, buf)}")


main()

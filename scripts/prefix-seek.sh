#!/usr/bin/env bash
# Prefix seeks with and without prefix filters, sievedb beside RocksDB:
# two `sievedb bench --engine all` processes started together on the same
# device (side by side), one with `--prefix-len 8` (sievedb's
# `Options::prefix_extractor` with its prefix filters; RocksDB's fixed
# prefix extractor with prefix Bloom in its table filters and memtable),
# one without. Each fills NUM (1M) keys of 16 B (100 B values) in groups of
# 10 sharing their first 8 bytes (`--keys-per-prefix 10`), settles
# compaction, then runs READS (200k) seeks of `seekrandom` (to written keys)
# and `seekmissing` (to prefixes never written, which sort between written
# ones), each followed by NEXTS (10) next() steps within the key's prefix;
# REPEATS (3) repeats, the engines' order reversed every other repeat.
# 10 bits/key filters, page cache.
#
# Feeds BENCHMARKS.md "Prefix seeks". Writes the --csv rows of both runs,
# a `prefix_len` column first (8 or none), to
# docs/benchmarks/prefix-seek-REV.csv (REV: `git rev-parse --short HEAD`
# unless set) and the text reports to $OUT (default /tmp/prefix-seek).
#
# Usage: scripts/prefix-seek.sh BINARY
#   BINARY built with `cargo build --release -p sievedb-cli --features rocksdb`
set -euo pipefail
if [ $# -ne 1 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
cd "$(dirname "$0")/.."
BIN=$1
OUT=${OUT:-/tmp/prefix-seek}
NUM=${NUM:-1000000}
READS=${READS:-200000}
NEXTS=${NEXTS:-10}
REPEATS=${REPEATS:-3}
REV=${REV:-$(git rev-parse --short HEAD)}
rm -rf "$OUT"
mkdir -p "$OUT"
run() { # name, then extra flags
  local name=$1
  shift
  "$BIN" bench --engine all --num "$NUM" --reads "$READS" --key-size 16 --value-size 100 \
    --keys-per-prefix 10 --seek-nexts "$NEXTS" --repeats "$REPEATS" --csv "$OUT/$name.csv" \
    --benchmarks fillrandom,waitforcompaction,seekrandom,seekmissing "$@" \
    >"$OUT/$name.txt" 2>"$OUT/$name.err"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/load.log"
run prefix8 --prefix-len 8 &
run none &
wait
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/load.log"
{
  echo "prefix_len,$(head -n1 "$OUT/prefix8.csv")"
  awk -F, 'NR > 1 && $2 ~ /^seek/ { print "8," $0 }' "$OUT/prefix8.csv"
  awk -F, 'NR > 1 && $2 ~ /^seek/ { print "none," $0 }' "$OUT/none.csv"
} >"docs/benchmarks/prefix-seek-$REV.csv"
echo "wrote docs/benchmarks/prefix-seek-$REV.csv; reports in $OUT"

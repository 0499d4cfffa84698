#!/usr/bin/env bash
# Concurrent writers: YCSB-A (50% lookups, 50% updates, one-key unsynced
# batches) at 1 and 2 threads, every engine in one `sievedb bench --engine
# all` per run, the runs interleaved (1 thread, 2 threads, 1, 2, ...), each on
# a fresh fill of 1M keys:
#
#   sievedb bench --engine all --benchmarks fillrandom,waitforcompaction,ycsba \
#       --num 1000000 --reads 1000000 --threads T
#
# Writes docs/benchmarks/ycsba-threads-REV.csv (REV the build's commit, default
# `git rev-parse --short HEAD`; the --csv rows of ycsba, a `round` column
# added) and the text reports to $OUT (default /tmp/ycsb-threads).
#
# Usage: scripts/ycsb-threads.sh [BINARY]   (ROUNDS=3 by default)
#   BINARY defaults to target/release/sievedb, built with
#   cargo build --release -p sievedb-cli --features rocksdb,fjall,leveldb
set -euo pipefail

cd "$(dirname "$0")/.."
BIN=${1:-target/release/sievedb}
OUT=${OUT:-/tmp/ycsb-threads}
DB=${DB:-/tmp/ycsb-threads-db}
ROUNDS=${ROUNDS:-3}
REV=${REV:-$(git rev-parse --short HEAD)}
rm -rf "$OUT" "$DB"
mkdir -p "$OUT"

for r in $(seq 1 "$ROUNDS"); do
    for t in 1 2; do
        echo "== round $r, $t thread(s) (load: $(cut -d' ' -f1-3 /proc/loadavg))"
        "$BIN" bench --db "$DB" --engine all --num 1000000 --reads 1000000 --threads "$t" \
            --benchmarks fillrandom,waitforcompaction,ycsba --csv "$OUT/r$r-t$t.csv" \
            2>>"$OUT/err.log" | tee "$OUT/r$r-t$t.txt" | grep -E "^ycsba +(sievedb|leveldb|rocksdb|fjall) "
    done
done

# One CSV: the header once (with a round column), then every run's ycsba rows.
{
    head -n1 "$OUT/r1-t1.csv" | sed 's/^/round,/'
    for r in $(seq 1 "$ROUNDS"); do
        for t in 1 2; do
            awk -F, -v r="$r" 'NR > 1 && $2 == "ycsba" { print r "," $0 }' "$OUT/r$r-t$t.csv"
        done
    done
} >"docs/benchmarks/ycsba-threads-$REV.csv"
echo "wrote docs/benchmarks/ycsba-threads-$REV.csv; reports in $OUT"

#!/usr/bin/env bash
# The transactional benchmarks' sweep: sievedb vs RocksDB (OptimisticTransactionDB,
# TransactionDB) vs fjall (OptimisticTxDatabase, SingleWriterTxDatabase), in one
# `sievedb bench --engine all` per shape so the engines run side by side.
#
#   1. fill 1M keys into DB (plain databases) and let compaction settle;
#   2. for 1, 2 and 4 threads: txnrandom (low contention: keys uniform over
#      the 1M) and txnrandomhot (high contention: a hot set of 100 keys), K = 4
#      keys read for update then written per transaction, 10 s each,
#      --txn-mode optimistic then pessimistic (a waitforcompaction first and
#      last settles what the previous run left; RocksDB's TransactionDB cannot
#      flush in the rocksdb crate 0.20.1, so the optimistic run after it settles
#      RocksDB); each --repeats 2 (default), the engines' order reversed in
#      the second repeat;
#   3. readrandom vs txnreadrandom (1 and 4 lookups per read-only transaction),
#      1 thread, 1M lookups, each twice, interleaved.
#
# Writes docs/benchmarks/txnrandom-REV.csv and docs/benchmarks/txnreadrandom-REV.csv
# (the --csv rows of the txn*/readrandom benchmarks; REV the build's commit,
# default `git rev-parse --short HEAD`) and the raw text reports to $OUT
# (default /tmp/txnrandom-sweep). LevelDB, in the binary too, has no
# transactions and is skipped by the txn* benchmarks.
#
# Usage: scripts/txnrandom.sh [BINARY]
#   BINARY defaults to /work/target-txnbench/release/sievedb, built with
#   CARGO_TARGET_DIR=/work/target-txnbench cargo build --release -p sievedb-cli \
#     --features rocksdb,fjall,leveldb
set -euo pipefail

cd "$(dirname "$0")/.."
BIN=${1:-/work/target-txnbench/release/sievedb}
OUT=${OUT:-/tmp/txnrandom-sweep}
DB=${DB:-/tmp/txnrandom-db}
NUM=${NUM:-1000000}
DURATION=${DURATION:-10}
REPEATS=${REPEATS:-2}
REV=${REV:-$(git rev-parse --short HEAD)}
rm -rf "$OUT" "$DB"
mkdir -p "$OUT"

run() { # name, then bench flags
    local name=$1
    shift
    echo "== $name (load: $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$OUT/sweep.log"
    nice -n 0 "$BIN" bench --db "$DB" --engine all --num "$NUM" --csv "$OUT/$name.csv" "$@" \
        2>>"$OUT/sweep.err" | tee "$OUT/$name.txt" | grep -E "^(sievedb|rocksdb|fjall|leveldb) " |
        tee -a "$OUT/sweep.log"
}

run fill --benchmarks fillrandom,waitforcompaction
for t in 1 2 4; do
    run "optimistic-t$t" --use-existing-db --threads "$t" --duration "$DURATION" --repeats "$REPEATS" \
        --txn-mode optimistic --benchmarks waitforcompaction,txnrandom,txnrandomhot,waitforcompaction
    run "pessimistic-t$t" --use-existing-db --threads "$t" --duration "$DURATION" --repeats "$REPEATS" \
        --txn-mode pessimistic --benchmarks txnrandom,txnrandomhot,waitforcompaction
done
for k in 1 4; do
    run "readonly-k$k" --use-existing-db --threads 1 --reads 1000000 --txn-keys "$k" \
        --benchmarks waitforcompaction,readrandom,txnreadrandom,readrandom,txnreadrandom
done

# One CSV per benchmark family: the header once, then the rows of its benchmarks.
merge() { # pattern of benchmark names, files...
    local pat=$1
    shift
    head -n1 "$1"
    for f in "$@"; do
        awk -F, -v pat="$pat" 'NR > 1 && $2 ~ pat' "$f"
    done
}
merge '^txnrandom' "$OUT"/optimistic-t*.csv "$OUT"/pessimistic-t*.csv >"docs/benchmarks/txnrandom-$REV.csv"
merge '^(readrandom|txnreadrandom)$' "$OUT"/readonly-k*.csv >"docs/benchmarks/txnreadrandom-$REV.csv"
echo "wrote docs/benchmarks/txnrandom-$REV.csv and docs/benchmarks/txnreadrandom-$REV.csv; reports in $OUT"

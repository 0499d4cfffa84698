#!/bin/bash
# The ops/s of two filter policies read side by side: `uniform` and `elastic` under a
# 4 bits/key budget, started together on two copies of one bulk-loaded tree
# with the same seed, so that both meet the same device at the same time (on
# this VM the cost of a device read moves 2.5-5x between runs made at
# different times). The second round swaps the copies. Zipfian lookups (half
# absent), O_DIRECT, 8 MiB block cache, each run from a cold start (no
# HOTNESS file).
#
# Feeds BENCHMARKS.md, "Filter memory under a budget" (read side by side).
# Two rounds, both policies at once in each: as long as the slower run
# (1-3 minutes per round at 100,000 lookups in the runs of BENCHMARKS.md).
#
#   scripts/policy-ops-pair.sh SIEVEDB_BINARY OUT_DIR TREE_A TREE_B NUM LEVEL1_SIZE
#
# TREE_A/sievedb and TREE_B/sievedb: the same tree (e.g. `cp -a`), as for
# scripts/policy-device-reads.sh. Environment: READS (100000), ZIPF (0.99),
# SEEDS ("7001 7002": one round per seed). Writes POLICY-ROUND.json and the
# `/usr/bin/time -v` logs with progress lines (POLICY-ROUND.log) into
# OUT_DIR, then prints the table of scripts/policy_ops_pair.py.
set -euo pipefail
if [ $# -ne 6 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
BIN=$1; OUT=$2; A=$3; B=$4; NUM=$5; L1=$6
mkdir -p "$OUT"
FLAGS=(--use-existing-db --benchmarks readmixed --num "$NUM" --key-size 24 --value-size 100
  --size-ratio 10 --target-file-size 65536 --level1-size "$L1" --use-direct-reads
  --block-cache-size 8388608 --distribution zipfian --alpha 0.5 --zipf-s "${ZIPF:-0.99}"
  --reads "${READS:-100000}" --stats-interval 10 --filter-memory-bits-per-key 4)
round=0
for seed in ${SEEDS:-7001 7002}; do
  round=$((round + 1))
  if [ $((round % 2)) = 1 ]; then UT=$A; ET=$B; else UT=$B; ET=$A; fi
  rm -f "$UT/sievedb/HOTNESS" "$ET/sievedb/HOTNESS"
  /usr/bin/time -v "$BIN" bench --db "$UT" "${FLAGS[@]}" --seed "$seed" --filter-policy uniform \
    --json > "$OUT/uniform-$round.json" 2> "$OUT/uniform-$round.log" &
  /usr/bin/time -v "$BIN" bench --db "$ET" "${FLAGS[@]}" --seed "$seed" --filter-policy elastic \
    --json > "$OUT/elastic-$round.json" 2> "$OUT/elastic-$round.log" &
  wait
done
python3 "$(dirname "$0")/policy_ops_pair.py" "$OUT" "$OUT/pair.csv"

#!/usr/bin/env bash
# Two builds side by side on concurrent writers: sievedb's ycsba (50% lookups,
# 50% unsynced one-key updates) at 1 and 2 threads, each run on a fresh fill
# of 1M keys, interleaved (base 1, base 2, new 1, new 2, ...), REPEATS (3)
# rounds; prints a CSV (round,build,threads,benchmark,ops_per_sec) of the
# fillrandom and ycsba rows. About 20 seconds per run.
#
#   scripts/ab-threads.sh BASE_BINARY NEW_BINARY > FILE.csv
set -euo pipefail
if [ $# -ne 2 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
DB=${DB:-/tmp/ab-threads-db}
echo "round,build,threads,benchmark,ops_per_sec"
for r in $(seq 1 "${REPEATS:-3}"); do
  for b in "base:$1" "new:$2"; do
    name=${b%%:*}; exe=${b#*:}
    for t in 1 2; do
      rm -rf "$DB"
      "$exe" bench --db "$DB" --engine sievedb --num 1000000 --reads 1000000 --threads "$t" \
        --benchmarks fillrandom,waitforcompaction,ycsba 2>/dev/null |
        awk -v r="$r" -v b="$name" -v t="$t" '$1 == "fillrandom" || $1 == "ycsba" { print r "," b "," t "," $1 "," $5 }'
    done
  done
done
rm -rf "$DB"

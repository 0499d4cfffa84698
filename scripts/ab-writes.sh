#!/bin/bash
# The write path of two builds side by side: fillrandom of NUM (1M) puts
# unsynced, and of SYNC_NUM (20,000) puts each synced (--sync, an fdatasync
# per put), 24 B keys, 100 B values, the default (preallocated, mapped) WAL,
# interleaved, REPEATS (3) runs each, a fresh database per run in DB_DIR
# (a temp dir by default). Takes about
# 1 minute a run on this 2-core VM.
#
# Feeds BENCHMARKS.md, "Durability: the write path, the open, repair".
#
#   scripts/ab-writes.sh BASE_BINARY NEW_BINARY [OUT.csv]
#
# Both binaries need `sievedb bench --sync`. Prints and writes (OUT.csv, or
# ab-writes.csv) repeat, build, benchmark, µs per op, ops/s.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
OUT=${3:-ab-writes.csv}
DB_DIR=${DB_DIR:-$(mktemp -d)}
echo "repeat,build,benchmark,micros_per_op,ops_per_sec" > "$OUT"
for r in $(seq 1 "${REPEATS:-3}"); do
  for b in "base:$1" "new:$2"; do
    name=${b%%:*}; exe=${b#*:}
    for run in "fillrandom:${NUM:-1000000}:" "fillsync:${SYNC_NUM:-20000}:--sync"; do
      label=${run%%:*}; rest=${run#*:}; n=${rest%%:*}; flag=${rest#*:}
      rm -rf "$DB_DIR/db"
      "$exe" bench --engine sievedb --db "$DB_DIR/db" --num "$n" --key-size 24 --value-size 100 \
        --benchmarks fillrandom $flag --json 2>/dev/null |
        python3 -c "
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if d.get('type') == 'result' and d['benchmark'] == 'fillrandom':
        print('$r,$name,$label,%.3f,%.0f' % (d['micros_per_op'], d['ops_per_sec']))
" | tee -a "$OUT"
    done
  done
done

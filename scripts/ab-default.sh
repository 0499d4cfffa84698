#!/bin/bash
# The default (unlimited filter memory) path of two builds side by side:
# fillrandom, readrandom and readmissing on 1M keys of 24 B with 100 B
# values, page cache, interleaved, REPEATS (3) runs each; prints µs per op.
#
# Feeds no section of its own: run it before and after a change to the read or
# write path (CONTRIBUTING.md). Seconds per run.
#
#   scripts/ab-default.sh BASE_BINARY NEW_BINARY
set -euo pipefail
if [ $# -ne 2 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
for r in $(seq 1 "${REPEATS:-3}"); do
  for b in "base:$1" "new:$2"; do
    name=${b%%:*}; exe=${b#*:}
    "$exe" bench --engine sievedb --num 1000000 --reads 1000000 --key-size 24 --value-size 100 \
      --benchmarks fillrandom,waitforcompaction,readrandom,readmissing --json 2>/dev/null |
      python3 -c "
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if d.get('type') == 'result' and d['benchmark'] in ('fillrandom', 'readrandom', 'readmissing'):
        print('$r', '$name', d['benchmark'], round(d['micros_per_op'], 3))
"
  done
done

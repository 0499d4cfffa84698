#!/bin/bash
# The filter layouts side by side in memory (`sievedb bench --benchmarks
# filterbench`): bloom, blocked and ribbon at 4, 7 and 10 bits per key, and
# ribbon at 7.7 (the bits it needs for Bloom-10's FPR), on NUM (1M) keys with
# READS (2M) absent probes, REPEATS (3) runs each; the filters are built from
# the keys' stored digests and probed with one digest per query. Writes CSV
# rows (layout, bits/key asked, repeat, keys, bits/key used, k or r, measured
# and theoretical FPR, build ns per key, ns per query, digests per query) to
# stdout. About a minute.
#
# Feeds BENCHMARKS.md "Filter layouts".
#
#   scripts/filter-layouts.sh SIEVEDB_BINARY > docs/benchmarks/filter-layouts-BUILD.csv
set -euo pipefail
if [ $# -ne 1 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
num=${NUM:-1000000}
reads=${READS:-2000000}
echo "layout,bits_per_key,repeat,filter_keys,bits_per_key_used,k_or_r,measured_fpr,theoretical_fpr,build_ns_per_key,ns_per_query,digests_per_query"
for r in $(seq 1 "${REPEATS:-3}"); do
  for cfg in bloom:4 blocked:4 ribbon:4 bloom:7 blocked:7 ribbon:7 bloom:10 blocked:10 ribbon:10 ribbon:7.7; do
    layout=${cfg%%:*}; bpk=${cfg##*:}
    "$1" bench --benchmarks filterbench --filter "$layout" --bits-per-key "$bpk" \
      --num "$num" --reads "$reads" --json 2>/dev/null |
      python3 -c "
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if d.get('type') != 'result' or d['benchmark'] != 'filterbench':
        continue
    n = d['filter_keys']
    print(','.join(str(v) for v in ['$layout', '$bpk', $r, n, round(8 * d['filter_memory_bytes'] / n, 3),
        d['filter_probes_k'], d['measured_fpr'], round(d['theoretical_fpr'], 6),
        round(d['build_seconds'] * 1e9 / n, 1), round(d['ns_per_query'], 2), d['digests_per_query']]))
"
  done
done

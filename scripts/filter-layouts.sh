#!/bin/bash
# The filter layouts side by side in memory (`sievedb bench --benchmarks
# filterbench`): bloom, blocked, ribbon (128-bit rows, fractional bits) and
# ribbon64 (64-bit rows) at 4, 7 and 10 bits per key, ribbon at 7.2 and
# ribbon64 at 7.7 (the bits each needs for Bloom-10's FPR), on NUM (1M) keys
# with READS (2M) absent probes, REPEATS (3) runs each, interleaved; then
# ribbon's FPR against its theory from 2 to 16 bits per key in fractional
# steps, once each, with SWEEP_READS (20M) absent probes (repeat 0 in the
# CSV). The filters are built from the keys' stored digests and probed with
# one digest per query. Writes CSV rows (layout, bits/key asked, repeat, keys,
# bits/key used, k or r, measured and theoretical FPR, build ns per key, ns
# per query, digests per query) to stdout. About five minutes.
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
row() { # binary layout bpk repeat reads
  "$1" bench --benchmarks filterbench --filter "$2" --bits-per-key "$3" \
    --num "$num" --reads "$5" --json 2>/dev/null |
    python3 -c "
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if d.get('type') != 'result' or d['benchmark'] != 'filterbench':
        continue
    n = d['filter_keys']
    print(','.join(str(v) for v in ['$2', '$3', $4, n, round(8 * d['filter_memory_bytes'] / n, 3),
        d['filter_probes_k'], d['measured_fpr'], round(d['theoretical_fpr'], 6),
        round(d['build_seconds'] * 1e9 / n, 1), round(d['ns_per_query'], 2), d['digests_per_query']]))
"
}
for r in $(seq 1 "${REPEATS:-3}"); do
  for b in 4 7 10; do
    for layout in bloom blocked ribbon ribbon64; do
      row "$1" "$layout" "$b" "$r" "$reads"
    done
  done
  row "$1" ribbon 7.2 "$r" "$reads"
  row "$1" ribbon64 7.7 "$r" "$reads"
done
for b in 2 2.5 3.3 4.6 5.5 6.25 8.5 9.2 11.3 12.7 13.9 16; do
  row "$1" ribbon "$b" 0 "${SWEEP_READS:-20000000}"
done

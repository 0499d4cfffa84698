#!/bin/bash
# Issue 20's open bar in instructions (valgrind's callgrind, all threads),
# where wall time on a shared 2-core VM varies by ±30%: one process per
# policy opening a bulk-loaded tree cold (HOTNESS removed), doing 1,000
# O_DIRECT zipfian lookups and closing, as scripts/issue20-open.sh does,
# without a budget and with a 4 bits/key budget per policy.
#
#   scripts/issue20-open-instructions.sh OUT_DIR TREE_DIR NUM LEVEL1_SIZE BINARY...
#
# TREE_DIR/sievedb as for scripts/issue20-open.sh. Environment: POLICIES
# (none uniform monkey skew-at-write elastic elastic-uniform). Prints, per
# binary and policy, the instructions and their ratio to no budget.
set -euo pipefail
if [ $# -lt 5 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
OUT=$1; TREE=$2; NUM=$3; L1=$4; shift 4
POLICIES=${POLICIES:-none uniform monkey skew-at-write elastic elastic-uniform}
mkdir -p "$OUT"
i=0
for exe in "$@"; do
  i=$((i + 1))
  none=""
  for p in $POLICIES; do
    extra=()
    [ "$p" != none ] && extra=(--filter-memory-bits-per-key 4 --filter-policy "$p")
    rm -f "$TREE/sievedb/HOTNESS"
    valgrind --tool=callgrind --callgrind-out-file="$OUT/b$i.$p.cg" "$exe" bench --db "$TREE" \
      --use-existing-db --benchmarks readmixed --alpha 0.5 --num "$NUM" --key-size 24 --value-size 100 \
      --size-ratio 10 --target-file-size 65536 --level1-size "$L1" --use-direct-reads \
      --block-cache-size 8388608 --distribution zipfian --zipf-s 0.99 --reads 1000 "${extra[@]}" \
      >/dev/null 2>"$OUT/b$i.$p.err"
    n=$(sed -n 's/.*Collected : //p' "$OUT/b$i.$p.err")
    [ "$p" = none ] && none=$n
    ratio=$([ -n "$none" ] && python3 -c "print(f'{$n / $none:.2f}x')" || echo "-")
    echo "$exe $p $n instructions ($ratio no budget)"
  done
done
rm -f "$TREE/sievedb/HOTNESS"

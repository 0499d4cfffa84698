#!/bin/bash
# Ribbon units against Bloom units (issue 55), on bulk-loaded 5-level trees
# of 24 + 100 B entries in 64 KiB files (TARGET_FILE_SIZE bytes if set):
#
# 1. under a 4 bits/key budget (O_DIRECT, zipf 0.99, half absent, cold
#    start), every policy on three trees: Bloom units (6 of 2 bits/key),
#    Ribbon units (UNITS_RIBBON, default 8, of 12/8 bits/key: r = 1) and the
#    mixed tree (Bloom units above level MIXED_FROM, default 2, Ribbon units
#    from it down: `--ribbon-from-level`) and the chosen tree (each level's
#    family picked by the budget's price at the bits per key the policy is
#    expected to give it under the same 4 bits/key: `--choose-family`, one
#    tree per policy), each run by
#    scripts/policy-device-reads.sh, trees interleaved per policy;
# 2. without a budget (page cache, `readmissing`): all-Bloom whole filters
#    at 8 bits/key against Ribbon from level 1 down (`--ribbon-from-level
#    1`) at 8 bits/key and at RIBBON_BITS (default 6.3: r = 6, Bloom-8's
#    rate or better), interleaved REPEATS (3) times, with each tree's filter
#    memory after the run (every file's filter read). The whole Ribbon is
#    `--filter RIBBON_WHOLE` from level 1 down: ribbon64 (default, the
#    64-bit-row Ribbon, which `ribbon` was when BENCHMARKS.md's figures were
#    taken) or bloom (the wide Ribbon, what `--ribbon-from-level` picks for
#    whole Bloom filters).
# PARTS (default "budget unlimited") chooses the parts run, BUDGET_TREES
# (default all four) the trees of part 1, BUDGET_REPEATS (default 1) its
# rounds (every policy and tree once per round, interleaved).
#
#   scripts/ribbon-units.sh SIEVEDB_BINARY OUT_DIR WORK_DIR NUM
#
# NUM 4000000 (7,228 files, level-1 size 45324): about 3 minutes of bulk
# loads and 10-20 minutes of runs at READS 100000. Writes OUT_DIR/budget.csv
# (policy-device-reads.sh's columns and the tree) and OUT_DIR/unlimited.csv.
set -euo pipefail
if [ $# -ne 4 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
BIN=$1; OUT=$2; WORK=$3; NUM=$4
HERE=$(cd "$(dirname "$0")" && pwd)
UNITS_RIBBON=${UNITS_RIBBON:-8}; MIXED_FROM=${MIXED_FROM:-2}; REPEATS=${REPEATS:-3}
export READS=${READS:-100000}
mkdir -p "$OUT" "$WORK"
SHAPE=(--num "$NUM" --key-size 24 --value-size 100 --levels 5 --size-ratio 10 --target-file-size "${TARGET_FILE_SIZE:-65536}")
load() { # tree name, filter flags...
  local t=$1; shift
  [ -d "$WORK/$t/sievedb" ] && return
  "$BIN" bulkload "$WORK/$t/sievedb" "${SHAPE[@]}" "$@" > "$WORK/$t.load.txt"
}
load bloom-units --bits-per-key 12 --filter units --filter-units 6
load ribbon-units --bits-per-key 12 --filter ribbon-units --filter-units "$UNITS_RIBBON"
load mixed --bits-per-key 12 --filter units --filter-units 6 --ribbon-from-level "$MIXED_FROM"
# The chosen tree is priced for the policy it is read under: one per policy.
for p in uniform monkey skew-at-write elastic elastic-uniform; do
  load "chosen-$p" --bits-per-key 12 --filter units --filter-units 6 --choose-family \
    --filter-memory-bits-per-key 4 --filter-policy "$p"
done
load bloom8 --bits-per-key 8 --filter bloom
RIBBON_WHOLE=${RIBBON_WHOLE:-ribbon64}
load ribbon8-from1 --bits-per-key 8 --filter "$RIBBON_WHOLE" --ribbon-from-level 1
RIBBON_BITS=${RIBBON_BITS:-6.3}
load "ribbon$RIBBON_BITS-from1" --bits-per-key "$RIBBON_BITS" --filter "$RIBBON_WHOLE" --ribbon-from-level 1
L1=$(grep -o 'level1_size = [0-9]*' "$WORK/bloom-units.load.txt" | grep -o '[0-9]*$' || true)
[ -n "$L1" ] || L1=${LEVEL1_SIZE:?bulkload printed no level-1 size: set LEVEL1_SIZE}

CSV="$OUT/budget.csv"
[ -f "$CSV" ] || echo "tree,workload,policy,repeat,reads,device_reads,unit_loads,table_open_reads,block_cache_misses,ops_per_sec" > "$CSV"
PARTS=${PARTS:-budget unlimited}
for r in $(seq 1 "${BUDGET_REPEATS:-1}"); do
  for p in uniform monkey skew-at-write elastic elastic-uniform; do
    [[ " $PARTS " == *" budget "* ]] || break 2
    for t in ${BUDGET_TREES:-bloom-units ribbon-units mixed chosen}; do
      dir=$t; [ "$t" = chosen ] && dir=chosen-$p
      rm -rf "$OUT/run"
      POLICIES=$p ORACLE=0 REPEATS=1 "$HERE/policy-device-reads.sh" "$BIN" "$OUT/run" "$WORK/$dir" "$NUM" "$L1" > /dev/null
      # the tree first, this round's number as the repeat
      tail -n +2 "$OUT/run/runs.csv" | awk -F, -v OFS=, -v t="$t" -v r="$r" '{ $3 = r; print t, $0 }' >> "$CSV"
    done
  done
done

U="$OUT/unlimited.csv"
[ -f "$U" ] || echo "tree,repeat,reads,micros_per_op,filter_memory_bytes,filter_false_positives" > "$U"
for r in $(seq 1 "$REPEATS"); do
  [[ " $PARTS " == *" unlimited "* ]] || break
  for t in bloom8 ribbon8-from1 "ribbon$RIBBON_BITS-from1"; do
    "$BIN" bench --db "$WORK/$t" --use-existing-db --benchmarks readmissing --num "$NUM" \
      --key-size 24 --value-size 100 --size-ratio 10 --target-file-size "${TARGET_FILE_SIZE:-65536}" --level1-size "$L1" \
      --reads "$READS" --json > "$OUT/last.json"
    python3 - "$OUT/last.json" "$t" "$r" >> "$U" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("type") != "result":
        continue
    s = d["stats"]
    print(f'{sys.argv[2]},{sys.argv[3]},{d["ops"]},{1e6 / d["ops_per_sec"]:.4f},'
          f'{s["filter_memory_bytes"]},{s["filter_false_positives"]}')
PY
  done
done
cat "$CSV" "$U"

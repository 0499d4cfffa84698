#!/bin/bash
# Wall time of opening a bulk-loaded tree (the live-file check, the filter
# budget's plan) and of opening it plus 1,000 O_DIRECT zipfian lookups,
# without a filter budget and with a 4 bits/key budget under every policy,
# one process per measurement. Feeds BENCHMARKS.md, "Durability: the write
# path, the open, repair" (POLICIES=none). A few seconds per measurement;
# REPEATS x POLICIES x 2 of them (x 2 with BEFORE).
#
#   scripts/open-time.sh SIEVEDB_BINARY OUT_DIR TREE_DIR NUM LEVEL1_SIZE
#
# TREE_DIR/sievedb is a tree from
#   sievedb bulkload TREE_DIR/sievedb --num NUM --key-size 24 --value-size 100 \
#       --levels 5 --size-ratio 10 --target-file-size 65536 --bits-per-key 12 \
#       --filter units --filter-units 6
# (NUM 4000000: 7,228 files, level-1 size 45324; NUM 28000000: 50,584 files,
# level-1 size 316321; bulkload prints both). The HOTNESS file is removed
# before every run, so every run starts cold.
# Environment: REPEATS (3), POLICIES (none uniform monkey skew-at-write
# elastic elastic-uniform), BEFORE (a second binary, run interleaved).
# Writes OUT_DIR/runs.csv (tree, binary, policy, repeat, what, wall, user,
# sys, max RSS) and prints the medians.
set -euo pipefail
if [ $# -ne 5 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
BIN=$1; OUT=$2; TREE=$3; NUM=$4; L1=$5
REPEATS=${REPEATS:-3}
POLICIES=${POLICIES:-none uniform monkey skew-at-write elastic elastic-uniform}
mkdir -p "$OUT"
CSV="$OUT/runs.csv"
[ -f "$CSV" ] || echo "tree,binary,policy,repeat,what,wall_s,user_s,sys_s,maxrss_kb" > "$CSV"
bins=("after:$BIN")
[ -n "${BEFORE:-}" ] && bins+=("before:$BEFORE")
files=$(ls "$TREE/sievedb" | grep -c '\.sst$')
for r in $(seq 1 "$REPEATS"); do
  for p in $POLICIES; do
    for b in "${bins[@]}"; do
      name=${b%%:*}; exe=${b#*:}
      extra=()
      [ "$p" != none ] && extra=(--filter-memory-bits-per-key 4 --filter-policy "$p")
      for what in open open+1000; do
        reads=0; [ "$what" = open+1000 ] && reads=1000
        rm -f "$TREE/sievedb/HOTNESS"
        /usr/bin/time -f "%e,%U,%S,%M" -o "$OUT/time.tmp" "$exe" bench --db "$TREE" --use-existing-db \
          --benchmarks readmixed --alpha 0.5 --num "$NUM" --key-size 24 --value-size 100 --size-ratio 10 \
          --target-file-size 65536 --level1-size "$L1" --use-direct-reads --block-cache-size 8388608 \
          --distribution zipfian --zipf-s 0.99 --reads "$reads" --json "${extra[@]}" > "$OUT/last.json"
        echo "$files,$name,$p,$r,$what,$(tail -1 "$OUT/time.tmp")" >> "$CSV"
      done
    done
  done
done
rm -f "$TREE/sievedb/HOTNESS"
python3 - "$CSV" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
groups = {}
for r in rows:
    groups.setdefault((r["tree"], r["binary"], r["what"], r["policy"]), []).append(float(r["wall_s"]))
print("| files | binary | what | policy | median wall s | runs | ratio to none |")
print("|---:|---|---|---|---:|---:|---:|")
for (t, b, w, p), v in sorted(groups.items()):
    none = groups.get((t, b, w, "none"))
    ratio = statistics.median(v) / statistics.median(none) if none else float("nan")
    print(f"| {t} | {b} | {w} | {p} | {statistics.median(v):.2f} | {len(v)} | {ratio:.2f}x |")
PY

#!/bin/bash
# Instructions of opening and closing a bulk-loaded tree (valgrind's
# callgrind, all threads), without a filter budget and with a 4 bits/key
# budget under every policy: what a budget's plan of the tree costs an
# open, counted rather than timed (wall times of one open spread ±20% on a
# shared machine). One process per measurement, from a cold start (the
# HOTNESS file removed). Feeds BENCHMARKS.md, "What a budget costs an open".
# About 30 s per measurement.
#
#   scripts/open-instructions.sh OUT_DIR TREE_DIR NUM LEVEL1_SIZE BINARY...
#
# The binaries are told apart by their file names (e.g. B/2e5e72b B/d96bb5d).
# TREE_DIR/sievedb as for scripts/open-time.sh. Environment: POLICIES
# (none uniform monkey skew-at-write elastic elastic-uniform), READS (0:
# lookups after the open). Writes OUT_DIR/instructions.csv (binary's file
# name, policy, reads, instructions) and prints each budget's instructions beyond none's.
set -euo pipefail
if [ $# -lt 5 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
OUT=$1; TREE=$2; NUM=$3; L1=$4; shift 4
POLICIES=${POLICIES:-none uniform monkey skew-at-write elastic elastic-uniform}
command -v valgrind >/dev/null || { echo "valgrind is needed" >&2; exit 1; }
mkdir -p "$OUT"
CSV="$OUT/instructions.csv"
[ -f "$CSV" ] || echo "binary,policy,reads,instructions" > "$CSV"
for exe in "$@"; do
  for p in $POLICIES; do
    extra=()
    [ "$p" != none ] && extra=(--filter-memory-bits-per-key 4 --filter-policy "$p")
    rm -f "$TREE/sievedb/HOTNESS"
    out="$OUT/callgrind.$(basename "$exe").$p"
    valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file="$out" "$exe" bench \
      --db "$TREE" --use-existing-db --benchmarks readmixed --alpha 0.5 --num "$NUM" \
      --key-size 24 --value-size 100 --size-ratio 10 --target-file-size 65536 \
      --level1-size "$L1" --use-direct-reads --block-cache-size 8388608 \
      --distribution zipfian --zipf-s 0.99 --reads "${READS:-0}" "${extra[@]}" \
      > /dev/null 2> "$out.log"
    ir=$(sed -n 's/^summary: //p' "$out")
    echo "$(basename "$exe"),$p,${READS:-0},$ir" >> "$CSV"
    echo "$(basename "$exe") $p: $ir instructions"
  done
done
rm -f "$TREE/sievedb/HOTNESS"
python3 - "$CSV" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
none = {(r["binary"], r["reads"]): int(r["instructions"]) for r in rows if r["policy"] == "none"}
print("| binary | policy | instructions | beyond none |")
print("|---|---|---:|---:|")
for r in rows:
    base = none.get((r["binary"], r["reads"]))
    extra = f"{(int(r['instructions']) - base) / 1e6:+.0f}M" if base else ""
    print(f"| {r['binary']} | {r['policy']} | {int(r['instructions']):,} | {extra} |")
PY

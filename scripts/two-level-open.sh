#!/usr/bin/env bash
# Files of 128 MB with one-level indexes and whole filters against the same
# files with two-level indexes and partitioned filters (4 KiB partitions):
# what opening them reads and holds, and lookups after, under O_DIRECT.
# Bulk-loads NUM (12M) entries of 16 B keys and 100 B values into 2 levels
# (size ratio 10, --target-file-size 128 MiB: 11 files), blocked Bloom
# filters of 10 bits/key, once per shape, then per shape and repeat
# (REPEATS, 2; the shapes' order reversed every other repeat):
#   open   1,000 uniform `readrandom` (every file opened: the open's reads,
#          bytes and the metadata held), 8 MiB block cache;
#   cache8 READS (200k) uniform `readrandom`, 8 MiB block cache;
#   equal  the two-level tree only, its block cache 8 MiB plus the metadata
#          the one-level tree holds and it does not (equal memory);
#   budget READS zipfian (0.99) lookups under a filter budget of 5 bits/key
#          (half the filters), policy elastic: whole filters are all or
#          nothing per file, partitioned ones keep their hot partitions;
#   budgeteq  the two-level tree only, the budget lookups at equal memory
#          (the block cache of `equal`).
# About 6 minutes (most of it the lookups; the loads take seconds).
#
# Feeds BENCHMARKS.md "Large files: two-level indexes and partitioned
# filters". Writes docs/benchmarks/two-level-open-REV.csv (REV: `git
# rev-parse --short HEAD` unless set), the JSON lines to $OUT (default
# /tmp/two-level-open), and the trees to $WORK (default /tmp/two-level-work,
# 2.9 GB, removed at the end unless KEEP=1).
#
# Usage: scripts/two-level-open.sh BINARY
#   BINARY built with `cargo build --release -p sievedb-cli`
set -euo pipefail
if [ $# -ne 1 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
cd "$(dirname "$0")/.."
BIN=$1
OUT=${OUT:-/tmp/two-level-open}
WORK=${WORK:-/tmp/two-level-work}
NUM=${NUM:-12000000}
READS=${READS:-200000}
REPEATS=${REPEATS:-2}
REV=${REV:-$(git rev-parse --short HEAD)}
CSV=docs/benchmarks/two-level-open-$REV.csv
rm -rf "$OUT" "$WORK"
mkdir -p "$OUT" "$WORK"
TABLE=(--key-size 16 --value-size 100 --bits-per-key 10 --filter blocked
  --size-ratio 10 --target-file-size 134217728)
shape_flags() { # one | two
  [ "$1" = two ] && echo "--filter-partition-bytes 4096 --index-partition-bytes 4096" || true
}
declare -A L1
for shape in one two; do
  # shellcheck disable=SC2046
  "$BIN" bulkload "$WORK/$shape/sievedb" --num "$NUM" --levels 2 "${TABLE[@]}" \
    $(shape_flags "$shape") > "$OUT/load-$shape.txt"
  L1[$shape]=$(sed -n 's/.*--level1-size \([0-9]*\).*/\1/p' "$OUT/load-$shape.txt")
done
run() { # shape, run name, repeat, extra flags...
  local shape=$1 name=$2 rep=$3
  shift 3
  # shellcheck disable=SC2046
  "$BIN" bench --db "$WORK/$shape" --use-existing-db --num "$NUM" "${TABLE[@]}" \
    --level1-size "${L1[$shape]}" $(shape_flags "$shape") --use-direct-reads \
    --benchmarks readrandom --json "$@" > "$OUT/$shape-$name-$rep.json"
}
for rep in $(seq 1 "$REPEATS"); do
  order="one two"
  [ $((rep % 2)) -eq 0 ] && order="two one"
  for shape in $order; do
    echo "repeat $rep: $shape" >&2
    run "$shape" open "$rep" --reads 1000
    run "$shape" cache8 "$rep" --reads "$READS"
    run "$shape" budget "$rep" --reads "$READS" --distribution zipfian --zipf-s 0.99 \
      --filter-memory-bits-per-key 5 --filter-policy elastic
  done
  # Equal memory: the metadata the one-level tree holds beyond the two-level one's.
  extra=$(python3 -c "
import json, sys
m = lambda s: json.loads(open('$OUT/' + s + '-open-$rep.json').readline())['stats']['table_meta_bytes']
print(8388608 + m('one') - m('two'))")
  run two equal "$rep" --reads "$READS" --block-cache-size "$extra"
  run two budgeteq "$rep" --reads "$READS" --block-cache-size "$extra" --distribution zipfian \
    --zipf-s 0.99 --filter-memory-bits-per-key 5 --filter-policy elastic
done
# The CSV of the JSON lines in $OUT (block_cache_bytes: what the cache held
# at the end; block_cache_capacity: its size).
python3 - "$OUT" "$CSV" <<'EOF'
import csv, glob, json, os, sys
out, path = sys.argv[1], sys.argv[2]
cols = ["shape", "run", "repeat", "reads", "block_cache_capacity", "block_cache_bytes",
        "filter_memory_budget_bytes",
        "ops_per_sec", "micros_per_op", "engine_device_reads_per_op", "table_opens",
        "table_open_reads", "table_open_bytes", "table_meta_bytes", "index_partition_reads",
        "block_cache_misses", "filter_unit_reads", "filter_memory_bytes", "files"]
rows = []
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    shape, name, rep = os.path.basename(f)[:-5].split("-")
    d = json.loads(open(f).readline())
    s = d["stats"]
    rows.append({
        "shape": shape, "run": name, "repeat": rep, "reads": d["ops"],
        "block_cache_capacity": d["settings"]["block_cache_bytes"],
        "filter_memory_budget_bytes": s["filter_memory_budget_bytes"] or "",
        "ops_per_sec": round(d["ops_per_sec"], 1), "micros_per_op": round(d["micros_per_op"], 3),
        "engine_device_reads_per_op": d["engine_device_reads_per_op"],
        "files": sum(d["files_per_level"]),
        **{k: s[k] for k in cols if k in s and k not in ("filter_memory_budget_bytes",)},
    })
with open(path, "w", newline="") as fh:
    w = csv.DictWriter(fh, fieldnames=cols)
    w.writeheader()
    w.writerows(rows)
print(path)
EOF
[ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"

#!/bin/bash
# Device reads per Get and ops/s of every filter
# policy under a 4 bits/key budget, uniform at 8 bits/key, and the offline
# oracle, on one bulk-loaded tree, zipfian lookups (half absent), O_DIRECT,
# 8 MiB block cache, each run from a cold start (no HOTNESS file).
#
# Feeds BENCHMARKS.md, "Filter memory under a budget" (a small hot set,
# moving). One cold run per policy (plus a counting run for the oracle): a
# few minutes each at 100,000 O_DIRECT lookups, longer on a slow device.
#
#   scripts/policy-device-reads.sh SIEVEDB_BINARY OUT_DIR TREE_DIR NUM LEVEL1_SIZE
#
# TREE_DIR/sievedb as for scripts/open-time.sh. Environment: READS
# (200000), ZIPF (0.99), DIST (zipfian; or hotspot: HOT_OPS (0.8) of the
# lookups to a centred HOT_DATA (0.2) of the keys, ZIPF then unused), ALPHA
# (0.5: the share of lookups for existing keys), SHIFT (move the hot keys
# every SHIFT lookups; unset: they stay), REPEATS (1), POLICIES (uniform
# monkey skew-at-write elastic elastic-uniform), ORACLE (1: also uniform at 8 bits/key and the
# oracle; 0: not), EXTRA (more flags for every run, e.g.
# "--table-meta-cache-size 0"). Device reads = block-cache misses +
# filter unit loads + table-open reads. The oracle: a first run with every
# unit resident (12 bits/key budget), counts that never decay and every
# lookup counted (LEARN_SAMPLE, default 1; the engine's own rate is 4) writes
# the whole run's access counts to HOTNESS at close; the measured run reads them
# under skew-at-write at 4 bits/key (the greedy optimum of Σ f·fp for those
# counts, never moved on a lookup). Writes OUT_DIR/runs.csv and prints a
# table with every policy's device reads as a ratio to the oracle's.
set -euo pipefail
if [ $# -ne 5 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
BIN=$1; OUT=$2; TREE=$3; NUM=$4; L1=$5
READS=${READS:-200000}; ZIPF=${ZIPF:-0.99}; REPEATS=${REPEATS:-1}
DIST=${DIST:-zipfian}; ALPHA=${ALPHA:-0.5}
WORKLOAD=(--distribution "$DIST" --alpha "$ALPHA")
HOT_OPS=${HOT_OPS:-0.8}; HOT_DATA=${HOT_DATA:-0.2}
if [ "$DIST" = hotspot ]; then
  WORKLOAD+=(--hot-op-fraction "$HOT_OPS" --hot-data-fraction "$HOT_DATA")
else
  WORKLOAD+=(--zipf-s "$ZIPF")
fi
[ -z "${SHIFT:-}" ] || WORKLOAD+=(--hot-shift-every "$SHIFT")
LABEL=$([ "$DIST" = hotspot ] && echo "hotspot $HOT_OPS of lookups to $HOT_DATA of keys" || echo "zipf $ZIPF")
LABEL="$LABEL alpha $ALPHA${SHIFT:+ moving every $SHIFT}"
mkdir -p "$OUT"
CSV="$OUT/runs.csv"
HEADER="workload,policy,repeat,reads,device_reads,unit_loads,table_open_reads,block_cache_misses,ops_per_sec"
if [ -f "$CSV" ] && [ "$(head -n1 "$CSV")" != "$HEADER" ]; then
  echo "$CSV holds runs of another version of this script (another header): move it away first" >&2
  exit 1
fi
[ -f "$CSV" ] || echo "$HEADER" > "$CSV"
run() { # name, extra flags...
  local name=$1; shift
  "$BIN" bench --db "$TREE" --use-existing-db --benchmarks readmixed --num "$NUM" \
    --key-size 24 --value-size 100 --size-ratio 10 --target-file-size 65536 --level1-size "$L1" \
    --use-direct-reads --block-cache-size 8388608 "${WORKLOAD[@]}" \
    --reads "$READS" --json ${EXTRA:-} "$@" > "$OUT/last.json"
  python3 - "$OUT/last.json" "$name" "$LABEL" "$r" >> "$CSV" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("type") != "result":
        continue
    s = d["stats"]
    # The reads that loaded units (builds before they were counted: the units).
    dev = s["block_cache_misses"] + s.get("filter_unit_reads", s["filter_unit_loads"]) + s["table_open_reads"]
    print(f'{sys.argv[3]},{sys.argv[2]},{sys.argv[4]},{d["ops"]},{dev},{s["filter_unit_loads"]},'
          f'{s["table_open_reads"]},{s["block_cache_misses"]},{d["ops_per_sec"]:.1f}')
PY
}
for r in $(seq 1 "$REPEATS"); do
  for p in ${POLICIES:-uniform monkey skew-at-write elastic elastic-uniform}; do
    rm -f "$TREE/sievedb/HOTNESS"
    run "$p" --filter-memory-bits-per-key 4 --filter-policy "$p"
  done
  [ "${ORACLE:-1}" = 1 ] || continue
  rm -f "$TREE/sievedb/HOTNESS"
  run uniform@8 --filter-memory-bits-per-key 8 --filter-policy uniform
  rm -f "$TREE/sievedb/HOTNESS"
  run learn --filter-memory-bits-per-key 12 --filter-policy skew-at-write --filter-lifetime 1099511627776 \
    --filter-access-sample "${LEARN_SAMPLE:-1}"
  [ -f "$TREE/sievedb/HOTNESS" ] || { echo "the counting run wrote no HOTNESS" >&2; exit 1; }
  run oracle --filter-memory-bits-per-key 4 --filter-policy skew-at-write
  rm -f "$TREE/sievedb/HOTNESS"
done
python3 - "$CSV" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]))]
by = {}
for r in rows:
    by.setdefault((r["workload"], r["policy"]), []).append(r)
med = lambda rs, k: statistics.median(float(r[k]) / (float(r["reads"]) if k != "ops_per_sec" else 1) for r in rs)
for z in sorted({k[0] for k in by}):
    oracle = med(by[(z, "oracle")], "device_reads") if (z, "oracle") in by else float("nan")
    uni = med(by[(z, "uniform")], "ops_per_sec") if (z, "uniform") in by else float("nan")
    print(z)
    print("| policy | device reads per Get | ÷ oracle | unit loads per Get | ops/s | ÷ uniform ops/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for (zz, p), rs in by.items():
        if zz != z:
            continue
        d = med(rs, "device_reads")
        o = med(rs, "ops_per_sec")
        print(f"| {p} | {d:.3f} | {d / oracle:.2f} | {med(rs, 'unit_loads'):.3f} | {o:.0f} | {o / uni:.2f} |")
PY

#!/bin/bash
# The default benchmarks at several sizes for every engine of a build:
# fillrandom + waitforcompaction, then (a new process on the same data)
# readrandom and readmissing of --reads lookups, then an open alone; 24 B
# keys, 100 B values, page cache, each engine's default memtable and cache
# sizes as `sievedb bench` sets them.
#
# Feeds BENCHMARKS.md, "Against LevelDB, RocksDB and fjall, by path" and
# "Scaling: 1M to 100M keys". Minutes for 1M and 10M keys and every engine;
# 100M keys take hours (fjall's 100M fill alone took 6,510 s here).
#
#   scripts/scaling.sh SIEVEDB_BINARY OUT_DIR WORK_DIR [NUM ...]
#
# SIEVEDB_BINARY must be built with the baselines it should run
# (--features leveldb,rocksdb,fjall). NUM defaults to 1000000 10000000.
# Environment: ENGINES (sievedb leveldb rocksdb fjall), READS (1000000).
# Per engine and size it records: µs per op of each benchmark, peak RSS of
# the fill and of the reads (GNU time), bytes the fill wrote to the device
# (rusage block outputs × 512) ÷ bytes of keys and values put (write
# amplification as the device saw it, WAL included), the database's size on
# disk, and the wall time of an open (and close) with no lookup. Writes
# OUT_DIR/scaling.csv and prints a Markdown table. WORK_DIR needs room for
# the largest database (100M keys: ~13 GB) and is emptied per engine.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
BIN=$1; OUT=$2; WORK=$3; shift 3
SIZES=("$@"); [ ${#SIZES[@]} -gt 0 ] || SIZES=(1000000 10000000)
ENGINES=${ENGINES:-sievedb leveldb rocksdb fjall}
READS=${READS:-1000000}
mkdir -p "$OUT" "$WORK"
CSV="$OUT/scaling.csv"
[ -f "$CSV" ] || echo "num,engine,fillrandom_us,waitforcompaction_s,readrandom_us,readmissing_us,fill_rss_kb,read_rss_kb,write_amp,disk_bytes,open_s" > "$CSV"
flags=(--key-size 24 --value-size 100 --json)
result() { # json file, benchmark, field
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("type") == "result" and d["benchmark"] == sys.argv[2]:
        print(d[sys.argv[3]])
        break
else:
    print("nan")
PY
}
for num in "${SIZES[@]}"; do
  for e in $ENGINES; do
    db="$WORK/db"
    rm -rf "$db"
    echo "== $e, $num keys" >&2
    /usr/bin/time -f "%M %O" -o "$OUT/time.fill" "$BIN" bench --engine "$e" --db "$db" --num "$num" \
      --benchmarks fillrandom,waitforcompaction "${flags[@]}" > "$OUT/fill.json"
    /usr/bin/time -f "%M %O" -o "$OUT/time.read" "$BIN" bench --engine "$e" --db "$db" --num "$num" \
      --use-existing-db --reads "$READS" --benchmarks readrandom,readmissing "${flags[@]}" > "$OUT/read.json"
    start=$(date +%s.%N)
    "$BIN" bench --engine "$e" --db "$db" --num "$num" --use-existing-db --reads 0 \
      --benchmarks readrandom "${flags[@]}" > /dev/null
    open_s=$(echo "$(date +%s.%N) - $start" | bc)
    read -r fill_rss fill_blocks < "$OUT/time.fill"
    read -r read_rss _ < "$OUT/time.read"
    disk=$(du -sb "$db" | cut -f1)
    wamp=$(echo "scale=3; $fill_blocks * 512 / ($num * 124)" | bc)
    echo "$num,$e,$(result "$OUT/fill.json" fillrandom micros_per_op),$(result "$OUT/fill.json" waitforcompaction seconds),$(result "$OUT/read.json" readrandom micros_per_op),$(result "$OUT/read.json" readmissing micros_per_op),$fill_rss,$read_rss,$wamp,$disk,$open_s" >> "$CSV"
    cp "$OUT/fill.json" "$OUT/fill-$e-$num.json"
    cp "$OUT/read.json" "$OUT/read-$e-$num.json"
    rm -rf "$db"
  done
done
python3 "$(dirname "$0")/scaling_table.py" "$CSV"

#!/bin/bash
# Empty lookups on bulk-loaded 5-level trees (512-byte and 16-byte keys):
# hash sharing `filter` vs `levels`, alternating, 5 runs each, then one
# --breakdown run per mode. Figures in BENCHMARKS.md came from this script.
# Build first: cargo build --release -p sievedb-cli
B=${SIEVEDB:-./target/release/sievedb}
OUT=${OUT:-/tmp}
# Pin the lookups to one CPU (less noise on a shared machine); PIN= to disable.
PIN=${PIN-$(command -v taskset >/dev/null && echo "taskset -c 1")}
for ks in 512 16; do
  if [ $ks = 512 ]; then N=300000; else N=1000000; fi
  rm -rf $OUT/lvf$ks
  $B bulkload $OUT/lvf$ks/sievedb --num $N --key-size $ks --value-size 100 --levels 5 --size-ratio 10 --target-file-size 2097152 --bits-per-key 10 --json > $OUT/lvf$ks.load.json 2>/dev/null
  L1=$(python3 -c "import json;print(json.load(open('$OUT/lvf$ks.load.json'))['level1_size'])" 2>/dev/null || echo 0)
  S="--num $N --key-size $ks --value-size 100 --level1-size $L1 --size-ratio 10 --target-file-size 2097152"
  for rep in 1 2 3 4 5; do for m in filter levels; do
    $PIN $B bench --db $OUT/lvf$ks --use-existing-db --benchmarks readmissing --reads 1000000 $S --hash-sharing $m 2>&1 | grep "^readmissing" | sed "s/^/$ks $m /"
  done; done
  for m in filter levels; do
    $PIN $B bench --db $OUT/lvf$ks --use-existing-db --benchmarks readmissing --reads 1000000 $S --hash-sharing $m --breakdown 2>&1 | grep "^readmissing" | sed "s/^/$ks $m breakdown /"
  done
done

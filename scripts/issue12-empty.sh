#!/bin/bash
# Empty lookups on bulk-loaded 5-level trees (512-byte and 16-byte keys), two
# builds side by side: BEFORE and AFTER (sievedb binaries), `filter` and
# `levels` hash sharing, 5 interleaved repeats of 1M readmissing lookups each,
# then two --breakdown runs per build. The AFTER build also runs `filterprobe`
# (one digest + the candidate files' filter probes on the same keys: the
# lower bound a lookup is compared with). Lookups pinned to CPU 1.
#   BEFORE=old/sievedb AFTER=new/sievedb scripts/issue12-empty.sh > out.txt
# The trees are bulk-loaded by AFTER into $OUT (default /tmp).
set -u
A=${BEFORE:?BEFORE=path of the old sievedb binary}
B=${AFTER:?AFTER=path of the new sievedb binary}
OUT=${OUT:-/tmp}
PIN=${PIN-$(command -v taskset >/dev/null && echo "taskset -c 1")}
for ks in 512 16; do
  if [ $ks = 512 ]; then N=300000; else N=1000000; fi
  rm -rf "$OUT/lvf$ks"
  $B bulkload "$OUT/lvf$ks/sievedb" --num $N --key-size $ks --value-size 100 --levels 5 --size-ratio 10 --target-file-size 2097152 --bits-per-key 10 --json > "$OUT/lvf$ks.load.json" 2>/dev/null
  L1=$(python3 -c "import json;print(json.load(open('$OUT/lvf$ks.load.json'))['level1_size'])")
  S="--num $N --key-size $ks --value-size 100 --level1-size $L1 --size-ratio 10 --target-file-size 2097152"
  for rep in 1 2 3 4 5; do
    for m in filter levels; do
      for which in before after; do
        if [ $which = before ]; then bin=$A; extra=""; else bin=$B; extra=""; [ $m = levels ] && extra=",filterprobe"; fi
        $PIN $bin bench --db "$OUT/lvf$ks" --use-existing-db --benchmarks readmissing$extra --reads 1000000 $S --hash-sharing $m 2>&1 \
          | grep -E "^(readmissing|filterprobe)" | sed "s/^/$ks $m $which rep$rep /"
      done
    done
  done
  for rep in 1 2; do
    for which in before after; do
      if [ $which = before ]; then bin=$A; else bin=$B; fi
      $PIN $bin bench --db "$OUT/lvf$ks" --use-existing-db --benchmarks readmissing --reads 1000000 $S --hash-sharing levels --breakdown 2>&1 \
        | grep "^readmissing" | sed "s/^/$ks levels $which breakdown$rep /"
    done
  done
done

#!/bin/bash
# What a filter budget costs a lookup, in instructions (valgrind's callgrind, all
# threads: the lookup thread and the filter budget's worker): page-cache
# readmissing on a 1M-key tree with 6 filter units, every unit resident,
# without a budget and under a 13 bits/key `elastic` budget. Each binary
# runs N1 and N2 lookups; (total(N2) - total(N1)) / (N2 - N1) is the cost of
# one lookup (open and setup cancel out). Valgrind runs one thread at a
# time; with --fair-sched=yes the worker gets its turns, as on a machine with
# a core to spare. Without it the worker may not run for the whole run: the
# queue of logs fills and logs are dropped, and their replay is not counted
# (the figures of this script before 5837d8e counted so).
#
# Feeds BENCHMARKS.md, "Filter memory under a budget" (what a budget costs a
# lookup). Minutes per binary: valgrind runs the lookups many times slower
# than natively.
#
#   scripts/budget-lookup-instructions.sh DIR BINARY...
#
# DIR/T1M is made by the first binary if missing:
#   sievedb bulkload DIR/T1M/sievedb --num 1000000 --key-size 16 --value-size 100 \
#       --filter units --filter-units 6 --bits-per-key 12
# Environment: N1 (100000), N2 (300000).
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
dir=$1; shift
n1=${N1:-100000} n2=${N2:-300000}
flags=(--filter units --filter-units 6 --bits-per-key 12)
[ -d "$dir/T1M/sievedb" ] || "$1" bulkload "$dir/T1M/sievedb" --num 1000000 --key-size 16 \
  --value-size 100 "${flags[@]}" >/dev/null
count() { # OUT BINARY N EXTRA...: total instructions of one run
  local out=$1 exe=$2 n=$3; shift 3
  valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file="$out" "$exe" bench --use-existing-db \
    --db "$dir/T1M" --num 1000000 --key-size 16 --value-size 100 --level1-size 11231 \
    --reads "$n" --benchmarks readmissing "${flags[@]}" "$@" >/dev/null 2>"$out.err"
  sed -n 's/.*Collected : //p' "$out.err"
}
i=0
for exe in "$@"; do
  i=$((i + 1))
  for mode in unlimited budget; do
    extra=()
    [ $mode = budget ] && extra=(--filter-memory-bits-per-key 13 --filter-policy elastic --initial-units 6)
    a=$(count "$dir/b$i.$mode.$n1.cg" "$exe" "$n1" "${extra[@]}")
    z=$(count "$dir/b$i.$mode.$n2.cg" "$exe" "$n2" "${extra[@]}")
    echo "$exe $mode $(( (z - a) / (n2 - n1) )) instructions/lookup"
  done
done

#!/bin/bash
# Instructions per operation of two builds, counted by valgrind (callgrind):
# deterministic where wall-clock times on a shared 2-core VM vary by ±30%.
# NEW fills a 1M-key database (24 B keys, 100 B values) and waits for its
# compactions; each build then runs readrandom and readmissing on that same
# tree with N1 and N2 lookups, and the difference of the two totals over
# N2 - N1 is the cost of one lookup (opening and setup cancel out). Writes:
# each build runs fillrandom + waitforcompaction of FILL keys into a new
# database; the foreground put path (Db::write_with) and the flush are
# reported per put from the profile, the whole run as a total.
#
# Feeds no table of BENCHMARKS.md: the instruction counts an A/B too small for
# wall time is judged on (CONTRIBUTING.md). Minutes per binary (valgrind).
#
#   scripts/ab-instructions.sh BASE_BINARY NEW_BINARY [DIR]
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
dir=${3:-$(mktemp -d)}
n1=${N1:-100000} n2=${N2:-300000} fill=${FILL:-300000}
common=(--engine sievedb --key-size 24 --value-size 100)
"$2" bench "${common[@]}" --num 1000000 --db "$dir/tree" --benchmarks fillrandom,waitforcompaction >/dev/null 2>&1
count() { # OUT BINARY ARGS...: total instructions of one run
  local out=$1; shift
  valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>"$out.err"
  sed -n 's/.*Collected : //p' "$out.err"
}
for b in "base:$1" "new:$2"; do
  name=${b%%:*}; exe=${b#*:}
  for bench in readrandom readmissing; do
    a=$(count "$dir/$name.$bench.$n1" "$exe" bench "${common[@]}" --num 1000000 --db "$dir/tree" --use-existing-db --reads "$n1" --benchmarks "$bench")
    z=$(count "$dir/$name.$bench.$n2" "$exe" bench "${common[@]}" --num 1000000 --db "$dir/tree" --use-existing-db --reads "$n2" --benchmarks "$bench")
    echo "$name $bench $(( (z - a) / (n2 - n1) )) instructions/lookup"
  done
  rm -rf "$dir/fill"
  total=$(count "$dir/$name.fill" "$exe" bench "${common[@]}" --db "$dir/fill" --num "$fill" --benchmarks fillrandom,waitforcompaction)
  inclusive() { callgrind_annotate --inclusive=yes "$dir/$name.fill" 2>/dev/null | grep -m1 "$1" | awk '{gsub(",", "", $1); print $1}'; }
  echo "$name fillrandom $(( $(inclusive 'Db::write_with \[') / fill )) instructions/put (Db::write_with)," \
    "$(( $(inclusive 'flush_oldest \[') / fill )) per put in flushes, $total in all (compactions included)"
done

#!/bin/bash
# Samples a running benchmark's own reads, for reads per Get over part of a
# run (scripts/elastic_vs_rocksdb_pair.py reads the output).
#
# Feeds the per-window tables of scripts/elastic_vs_rocksdb_pair.py. Runs as
# long as the process it samples.
#
#   scripts/sample-proc-io.sh PATTERN LOG OUT
#
# Waits for a `sievedb` process whose command line matches PATTERN (pgrep -f;
# not a wrapper such as /usr/bin/time, nor a sampler, whose command lines
# match too), then
# every 10 s, until it exits, appends to OUT one line: the epoch, the
# process's syscr and read_bytes (/proc/PID/io, every thread), `|`, and
# the last line of LOG (its `--stats-interval` progress line).
set -u
if [ $# -ne 3 ]; then
  sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
PATTERN=$1; LOG=$2; OUT=$3
pid=""
while [ -z "$pid" ]; do
  for p in $(pgrep -f "$PATTERN"); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sievedb ] && pid=$p && break
  done
  [ -n "$pid" ] || sleep 1
done
while [ -r "/proc/$pid/io" ]; do
  io=$(awk '/^syscr|^read_bytes/{printf "%s ", $2}' "/proc/$pid/io" 2>/dev/null) || break
  echo "$(date +%s) $io| $(tail -n1 "$LOG" 2>/dev/null)" >> "$OUT"
  sleep 10
done

#!/bin/bash
# The benchmark bars of issue 12, every engine in one `--engine all` run per
# shape, then a summary table computed from the JSON the runs wrote.
#
#   scripts/issue12-bars.sh SIEVEDB_BINARY OUT_DIR
#
# SIEVEDB_BINARY must be built with the baselines:
#   cargo build --release -p sievedb-cli --features leveldb,rocksdb,fjall
# Runs (each `--engine all --repeats $REPEATS --json`):
#   default: 1M × 24 B keys / 100 B values, defaults otherwise:
#            fillrandom,waitforcompaction,readrandom
#   small:   300K × 512 B / 100 B, T = 4, L1 1 MiB, 256 KiB files: the same
#   rww:     the default shape, fillrandom,waitforcompaction,readwhilewriting
#            with 1 reader thread for $RWW_DURATION s (db_bench's
#            readwhilewriting; waitforcompaction first so every engine's
#            readers start on a settled tree, not on its leftover fill debt)
# With BEFORE=path (another sievedb binary), each shape is also run with
# `--engine sievedb` by both binaries, interleaved repeat by repeat (the
# order alternating), for a before/after ratio measured on the same machine.
#
# Environment:
#   REPEATS       repeats per run (3)
#   NUM_SCALE     multiplies every --num and --reads (1; e.g. 0.02 for a smoke run)
#   RWW_DURATION  seconds of readwhilewriting (20: fill + 20 s stays under
#                 2 minutes per engine over 3 repeats on the default shape)
#   READS_FACTOR  lookups per readrandom as a multiple of --num (1, db_bench's default)
#   BEFORE        a second sievedb binary for the before/after runs (optional)
#   DB            directory for the databases (default: a fresh temporary
#                 directory per engine and repeat, chosen by `bench`)
#   PIN           command prefix, e.g. "taskset -c 1" (default: none; the
#                 baselines' background threads need the second core)
# Writes OUT_DIR/<run>.json (the JSON lines of each run), <run>.log (its
# stderr), meta.txt (binaries, checksums, machine) and summary.md (from
# scripts/issue12-summary.py, also printed).
set -euo pipefail

if [ $# -ne 2 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
BIN=$1
OUT=$2
REPEATS=${REPEATS:-3}
NUM_SCALE=${NUM_SCALE:-1}
RWW_DURATION=${RWW_DURATION:-20}
READS_FACTOR=${READS_FACTOR:-1}
PIN=${PIN:-}
HERE=$(cd "$(dirname "$0")" && pwd)

[ -x "$BIN" ] || { echo "not an executable: $BIN" >&2; exit 2; }
if [ -n "${BEFORE:-}" ] && [ ! -x "$BEFORE" ]; then
  echo "BEFORE is not an executable: $BEFORE" >&2
  exit 2
fi
mkdir -p "$OUT/bin"
# Run copies, so that a rebuild during the run cannot swap a binary.
cp "$BIN" "$OUT/bin/sievedb"
B="$OUT/bin/sievedb"
if [ -n "${BEFORE:-}" ]; then
  cp "$BEFORE" "$OUT/bin/sievedb-before"
  A="$OUT/bin/sievedb-before"
fi
# `--engine all` runs the engines the binary has: make sure it has all four.
for e in leveldb rocksdb fjall; do
  if ! "$B" bench --engine $e --num 10 --reads 10 --benchmarks fillrandom >/dev/null 2>&1; then
    echo "$BIN cannot run --engine $e: build it with --features leveldb,rocksdb,fjall" >&2
    exit 2
  fi
done

# n scaled by NUM_SCALE (at least 1).
scaled() { awk -v n="$1" -v s="$NUM_SCALE" 'BEGIN { v = int(n * s); if (v < 1) v = 1; print v }'; }
# n times READS_FACTOR (at least 1).
reads_for() { awk -v n="$1" -v f="$READS_FACTOR" 'BEGIN { v = int(n * f); if (v < 1) v = 1; print v }'; }

N_DEFAULT=$(scaled 1000000)
N_SMALL=$(scaled 300000)
SHAPE_DEFAULT="--num $N_DEFAULT --reads $(reads_for "$N_DEFAULT") --key-size 24 --value-size 100"
SHAPE_SMALL="--num $N_SMALL --reads $(reads_for "$N_SMALL") --key-size 512 --value-size 100 --size-ratio 4 --level1-size 1048576 --target-file-size 262144"
# Run name, its flags.
RUNS=(
  "default|$SHAPE_DEFAULT --benchmarks fillrandom,waitforcompaction,readrandom"
  "small|$SHAPE_SMALL --benchmarks fillrandom,waitforcompaction,readrandom"
  "rww|$SHAPE_DEFAULT --benchmarks fillrandom,waitforcompaction,readwhilewriting --threads 1 --duration $RWW_DURATION"
)

{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(uname -srm), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "binary: $BIN, sha256 $(sha256sum "$B" | cut -d' ' -f1)"
  [ -n "${BEFORE:-}" ] && echo "before: $BEFORE, sha256 $(sha256sum "$A" | cut -d' ' -f1)"
  echo "repeats: $REPEATS; NUM_SCALE $NUM_SCALE; READS_FACTOR $READS_FACTOR; RWW_DURATION $RWW_DURATION s; PIN '${PIN}'"
  for r in "${RUNS[@]}"; do echo "run ${r%%|*}: --engine all --repeats $REPEATS --json ${r#*|}"; done
} > "$OUT/meta.txt"
cat "$OUT/meta.txt"

# bench_run BINARY NAME FLAGS...: one run, JSON to OUT/NAME.json, stderr to OUT/NAME.log.
bench_run() {
  local bin=$1 name=$2
  shift 2
  local db=()
  [ -n "${DB:-}" ] && db=(--db "$DB/$name")
  echo "== $name: $(date -u +%T)" >&2
  # shellcheck disable=SC2086 # PIN is a command prefix, split on purpose.
  if ! $PIN "$bin" bench "$@" "${db[@]}" --json > "$OUT/$name.json" 2> "$OUT/$name.log"; then
    tail -20 "$OUT/$name.log" >&2
    echo "run $name failed (see $OUT/$name.log)" >&2
    exit 1
  fi
  [ -n "${DB:-}" ] && rm -rf "${DB:?}/$name"
  return 0
}

for r in "${RUNS[@]}"; do
  name=${r%%|*}
  # shellcheck disable=SC2086 # the flags are split on purpose.
  bench_run "$B" "$name" --engine all --repeats "$REPEATS" ${r#*|}
done

if [ -n "${BEFORE:-}" ]; then
  for r in "${RUNS[@]}"; do
    name=${r%%|*}
    for rep in $(seq 1 "$REPEATS"); do
      # Alternate which binary goes first.
      if [ $((rep % 2)) -eq 1 ]; then order="after before"; else order="before after"; fi
      for which in $order; do
        if [ "$which" = after ]; then bin=$B; else bin=$A; fi
        # shellcheck disable=SC2086
        bench_run "$bin" "ba-$name-$which-$rep" --engine sievedb --repeats 1 ${r#*|}
      done
    done
  done
fi

python3 "$HERE/issue12-summary.py" "$OUT" | tee "$OUT/summary.md"

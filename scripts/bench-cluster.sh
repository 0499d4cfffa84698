#!/usr/bin/env bash
# sievedb-server against etcd 3.4, side by side on this machine: the same
# client (`sievedb bench-cluster`), values, key space and durability (both
# fsync before acknowledging a write).
#
#   scripts/bench-cluster.sh [OUT_DIR]   (default docs/benchmarks/cluster/;
#                                         about 3 minutes at the defaults)
#
# Starts a 3-member etcd cluster (/usr/bin/etcd, default fsync, heartbeat
# 100 ms, election timeout 1000 ms; client ports 23791-23793, peer ports
# 23801-23803) and a 3-node sievedb-server cluster (scripts/cluster.sh on
# ports 7401-7403; heartbeat 100 ms, election timeout 500-1000 ms), data in
# one temporary directory; it stops when one of these ports is in use. Then
# puts and linearizable gets of 100 B values at 1, 16 and 64 clients, every
# client on the leader (found through the endpoints), the gets after a
# preload of the key space, the two engines taking turns point by point;
# bytes written to storage per put (/proc/PID/io of the three servers);
# and, last, the failover probe of each (SIGKILL the leader while writing
# at 200/s, ms until a write sent after the kill is acknowledged through
# another node). Writes OUT_DIR/bench-cluster.csv and .json, and stops
# everything it started on exit.
#
# Knobs: BENCH_SECONDS (per point, default 10), BENCH_CLIENTS (1,16,64),
# BENCH_KEYS (10000), BENCH_VALUE_SIZE (100), BENCH_ROUTE (leader|spread),
# KEEP=1 keeps the temporary directory (data and logs). Binaries:
# SIEVEDB_SERVER, SIEVEDB_CLI (default ${CARGO_TARGET_DIR:-target}/release/*, built here with
# cargo when missing or when BENCH_BUILD=1), ETCD (default /usr/bin/etcd;
# `apt-get install -y etcd-server etcd-client` if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/benchmarks/cluster}"
secs="${BENCH_SECONDS:-10}"
clients="${BENCH_CLIENTS:-1,16,64}"
keys="${BENCH_KEYS:-10000}"
vsize="${BENCH_VALUE_SIZE:-100}"
route="${BENCH_ROUTE:-leader}"
etcd="${ETCD:-/usr/bin/etcd}"
export SIEVEDB_SERVER="${SIEVEDB_SERVER:-${CARGO_TARGET_DIR:-target}/release/sievedb-server}"
cli="${SIEVEDB_CLI:-${CARGO_TARGET_DIR:-target}/release/sievedb}"

if [ ! -x "$etcd" ]; then
  echo "bench-cluster.sh: $etcd not found: apt-get install -y etcd-server etcd-client" >&2
  exit 1
fi
if [ "${BENCH_BUILD:-0}" = 1 ] || [ ! -x "$SIEVEDB_SERVER" ] || [ ! -x "$cli" ]; then
  echo "building: cargo build --release -p sievedb-server -p sievedb-cli" >&2
  cargo build --release -q -p sievedb-server -p sievedb-cli
fi
for port in 23791 23792 23793 23801 23802 23803 7401 7402 7403; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "bench-cluster.sh: 127.0.0.1:$port is in use; stop what listens there first" >&2
    exit 1
  fi
done
mkdir -p "$out"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
tmp="$(mktemp -d)"
export SIEVEDB_CLUSTER_DIR="$tmp/sievedb" SIEVEDB_CLUSTER_BASE_PORT=7400
epids=()
cleanup() {
  scripts/cluster.sh stop 2>/dev/null || true
  for p in "${epids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${epids[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  if [ "${KEEP:-0}" = 1 ]; then
    echo "kept $tmp" >&2
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT

# etcd: three members on loopback.
peers=""
for i in 1 2 3; do peers="$peers${peers:+,}e$i=http://127.0.0.1:2380$i"; done
eps_etcd=""
for i in 1 2 3; do
  "$etcd" --name "e$i" --data-dir "$tmp/e$i" \
    --listen-client-urls "http://127.0.0.1:2379$i" \
    --advertise-client-urls "http://127.0.0.1:2379$i" \
    --listen-peer-urls "http://127.0.0.1:2380$i" \
    --initial-advertise-peer-urls "http://127.0.0.1:2380$i" \
    --initial-cluster "$peers" --initial-cluster-token bench-cluster \
    --initial-cluster-state new --logger zap --log-outputs stderr \
    >"$tmp/e$i.log" 2>&1 &
  epids+=("$!")
  disown  # the failover probe SIGKILLs one: no job notice for it
  eps_etcd="$eps_etcd${eps_etcd:+,}127.0.0.1:2379$i"
done
for i in 1 2 3; do
  ok=""
  for _ in $(seq 200); do
    if curl -sf "127.0.0.1:2379$i/health" | grep -q '"health":"true"'; then ok=1; break; fi
    sleep 0.1
  done
  [ -n "$ok" ] || { echo "etcd member $i not healthy; log:" >&2; tail -n 20 "$tmp/e$i.log" >&2; exit 1; }
done
echo "etcd up: $eps_etcd (pids ${epids[*]})" >&2

# sievedb-server: three nodes on loopback.
scripts/cluster.sh start
spids=""
eps_sievedb=""
for i in 1 2 3; do
  spids="$spids${spids:+,}$(cat "$SIEVEDB_CLUSTER_DIR/n$i.pid")"
  eps_sievedb="$eps_sievedb${eps_sievedb:+,}127.0.0.1:740$i"
done
epids_csv="$(IFS=,; echo "${epids[*]}")"

rm -f "$out/bench-cluster.csv" "$out/bench-cluster.json"
run() { # run TARGET WORKLOAD CLIENTS [FLAG...]: one point of one engine
  local target="$1" workload="$2" c="$3"
  shift 3
  local eps="$eps_sievedb" pids="$spids"
  [ "$target" = etcd ] && eps="$eps_etcd" pids="$epids_csv"
  echo "== $target $workload, $c clients $*" >&2
  "$cli" bench-cluster --target "$target" --endpoints "$eps" --route "$route" \
    --clients "$c" --seconds "$secs" --value-size "$vsize" --keys "$keys" \
    --workload "$workload" --io-pids "$pids" --pids "$pids" "$@" \
    --csv "$out/bench-cluster.csv" --json "$out/bench-cluster.json" --append >/dev/null
}
# The two engines take turns point by point (the first of each pair
# alternating), so a change of the machine's pace (its disk's fsync
# latency drifts by 2x over minutes) moves both alike.
IFS=, read -r -a counts <<<"$clients"
turn=0
pair() { # pair WORKLOAD CLIENTS [FLAG...]
  if [ $((turn % 2)) -eq 0 ]; then run sievedb "$@"; run etcd "$@"; else run etcd "$@"; run sievedb "$@"; fi
  turn=$((turn + 1))
}
for c in "${counts[@]}"; do pair put "$c"; done
last=$((${#counts[@]} - 1))
for n in "${!counts[@]}"; do
  flags=()
  [ "$n" -eq 0 ] && flags+=(--preload)           # the key space, once, before the first get point
  [ "$n" -eq "$last" ] && flags+=(--failover-probe)  # last: it kills a node of each cluster
  pair get "${counts[$n]}" "${flags[@]}"
done
{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "cpus: $(nproc); load average before: $load_before"
  echo "etcd: $("$etcd" --version | head -n 1)"
  echo "seconds per point: $secs; clients: $clients; keys: $keys; value size: $vsize; route: $route"
} >"$out/bench-cluster.txt"
echo "wrote $out/bench-cluster.csv, .json, .txt (the tables above are the same points)" >&2

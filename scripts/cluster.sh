#!/usr/bin/env bash
# A 3-node sievedb-server cluster on loopback, for trying the API by hand
# or benchmarking (docs/guide "Replication").
#
#   scripts/cluster.sh start        start nodes 1-3, initialize, wait for a leader
#   scripts/cluster.sh stop         SIGTERM every node (then SIGKILL after 10 s)
#   scripts/cluster.sh kill N       SIGKILL node N
#   scripts/cluster.sh restart N    stop node N (if running) and start it again
#   scripts/cluster.sh status       each node's /cluster/status (or "down")
#
# Node N listens on 127.0.0.1:700N and keeps its data in $DIR/nN, its log
# in $DIR/nN.log and its pid in $DIR/nN.pid, where
# DIR=${SIEVEDB_CLUSTER_DIR:-/tmp/sievedb-cluster}. The binary is
# ${SIEVEDB_SERVER:-target/release/sievedb-server}; this script builds
# nothing: `cargo build --release -p sievedb-server` first. Extra server
# flags: SIEVEDB_SERVER_FLAGS (e.g. "--no-forward"). Ports: node N uses
# $((SIEVEDB_CLUSTER_BASE_PORT + N)), base 7000 by default.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${SIEVEDB_CLUSTER_DIR:-/tmp/sievedb-cluster}"
server="${SIEVEDB_SERVER:-target/release/sievedb-server}"
base="${SIEVEDB_CLUSTER_BASE_PORT:-7000}"
flags="${SIEVEDB_SERVER_FLAGS:-}"
nodes=(1 2 3)

addr() { echo "127.0.0.1:$((base + $1))"; }
pidfile() { echo "$dir/n$1.pid"; }
running() { # running N: the pid of node N if it is alive
  local f p
  f="$(pidfile "$1")"
  [ -f "$f" ] || return 1
  p="$(cat "$f")"
  kill -0 "$p" 2>/dev/null || return 1
  echo "$p"
}
need_server() {
  if [ ! -x "$server" ]; then
    echo "cluster.sh: $server not found; build it with" >&2
    echo "  cargo build --release -p sievedb-server" >&2
    echo "(or point SIEVEDB_SERVER at a sievedb-server binary)" >&2
    exit 1
  fi
  command -v curl >/dev/null || { echo "cluster.sh: needs curl" >&2; exit 1; }
}

port_busy() { # port_busy PORT: whether something listens on 127.0.0.1:PORT
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start_node() { # start_node N: starts node N, waits for its /health
  local n="$1" p
  if p="$(running "$n")"; then
    echo "node $n already running (pid $p)" >&2
    return 0
  fi
  if port_busy "$((base + n))"; then
    echo "cluster.sh: $(addr "$n") is in use by another process (not node $n of $dir);" >&2
    echo "  pick other ports with SIEVEDB_CLUSTER_BASE_PORT" >&2
    exit 1
  fi
  mkdir -p "$dir"
  # shellcheck disable=SC2086 # the extra flags split on spaces
  "$server" --id "$n" --listen "$(addr "$n")" --db "$dir/n$n" $flags \
    >>"$dir/n$n.log" 2>&1 &
  echo $! >"$(pidfile "$n")"
  for _ in $(seq 100); do
    if ! running "$n" >/dev/null; then
      echo "node $n exited; its log:" >&2
      tail -n 20 "$dir/n$n.log" >&2
      exit 1
    fi
    if curl -sf "$(addr "$n")/health" >/dev/null; then
      echo "node $n up at $(addr "$n") (pid $(cat "$(pidfile "$n")"), log $dir/n$n.log)" >&2
      return 0
    fi
    sleep 0.1
  done
  echo "node $n did not answer /health within 10 s (log: $dir/n$n.log)" >&2
  exit 1
}

stop_node() { # stop_node N: SIGTERM, then SIGKILL after 10 s
  local n="$1" p
  p="$(running "$n")" || { rm -f "$(pidfile "$n")"; return 0; }
  kill "$p" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$p" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$p" 2>/dev/null; then
    echo "node $n did not stop in 10 s: SIGKILL" >&2
    kill -9 "$p" 2>/dev/null || true
  fi
  rm -f "$(pidfile "$n")"
  echo "node $n stopped" >&2
}

leader_of() { # leader_of N: the leader id node N knows, or nothing
  curl -sf "$(addr "$1")/cluster/status" 2>/dev/null |
    sed -n 's/.*"leader_id":\([0-9][0-9]*\).*/\1/p'
}

wait_leader() {
  local l
  for _ in $(seq 200); do
    for n in "${nodes[@]}"; do
      l="$(leader_of "$n")"
      if [ -n "$l" ]; then
        echo "leader: node $l at $(addr "$l")" >&2
        return 0
      fi
    done
    sleep 0.1
  done
  echo "no leader within 20 s" >&2
  exit 1
}

init() {
  local members="" sep="" code
  for n in "${nodes[@]}"; do
    members="$members$sep\"$n\": \"$(addr "$n")\""
    sep=", "
  done
  code="$(curl -s -o "$dir/init.out" -w '%{http_code}' -X POST "$(addr 1)/cluster/init" \
    -d "{\"members\": {$members}}")"
  case "$code" in
    200) echo "initialized: {$members}" >&2 ;;
    409) echo "already initialized" >&2 ;;
    *) echo "init answered $code: $(cat "$dir/init.out")" >&2; exit 1 ;;
  esac
}

case "${1:-}" in
  start)
    need_server
    for n in "${nodes[@]}"; do start_node "$n"; done
    init
    wait_leader
    ;;
  stop)
    for n in "${nodes[@]}"; do stop_node "$n"; done
    ;;
  kill)
    n="${2:?usage: cluster.sh kill N}"
    if p="$(running "$n")"; then
      kill -9 "$p"
      rm -f "$(pidfile "$n")"
      echo "node $n killed (pid $p)" >&2
    else
      echo "node $n is not running" >&2
    fi
    ;;
  restart)
    n="${2:?usage: cluster.sh restart N}"
    need_server
    stop_node "$n"
    start_node "$n"
    ;;
  status)
    for n in "${nodes[@]}"; do
      printf 'node %s (%s): ' "$n" "$(addr "$n")"
      if ! curl -sf "$(addr "$n")/cluster/status"; then
        printf 'down'
      fi
      echo
    done
    ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac

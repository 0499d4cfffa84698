#!/usr/bin/env bash
# A follower 1 GB behind catches up by snapshot: leader RSS during the
# transfer against its steady RSS (issue 52's bar: peak < 2x steady).
#
#   scripts/snapshot-catchup.sh [OUT_DIR]     (about 5-10 minutes)
#
# Starts a 3-node loopback cluster of release `sievedb-server`
# (127.0.0.1:7201-7203, `--snapshot-logs 1000 --keep-logs 100`), stops a
# follower, writes 70,000 values of 16 KiB to distinct keys through the
# leader from 16 client threads (1.1 GB; concurrent writes share entries,
# and a snapshot every 1,000 entries purges the log behind it), waits for a
# snapshot of all of it, samples the leader's VmRSS and RssAnon for 10 s
# (steady), restarts the follower and samples the leader's and its VmRSS
# every 100 ms until it has applied everything. Writes
# OUT_DIR/snapshot-catchup.csv (one row: snapshot bytes on disk, transfer
# seconds, leader steady and peak RSS, their ratio, the follower's peak RSS
# and peak anonymous RSS, the leader's steady and peak anonymous RSS and
# their ratio) and the nodes' logs. VmRSS counts the pages of the tables the
# engine maps for reading (file pages the kernel may drop); RssAnon is the
# memory the process itself holds. Feeds BENCHMARKS.md "Replication".
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/snapshot-catchup}"
mkdir -p "$out"
cargo build --release -q -p sievedb-server
server=target/release/sievedb-server
dir="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

start() { # start ID
  "$server" --id "$1" --listen "127.0.0.1:720$1" --db "$dir/n$1" \
    --snapshot-logs 1000 --keep-logs 100 >>"$out/n$1.log" 2>&1 &
  pids[$1]=$!
  for _ in $(seq 100); do
    curl -sf "127.0.0.1:720$1/health" >/dev/null && return 0
    sleep 0.1
  done
  echo "node $1 did not start" >&2
  exit 1
}
status() { curl -sf "127.0.0.1:720$1/cluster/status"; }
field() { python3 -c "import json,sys; v=json.load(sys.stdin).get('$1'); print('' if v is None else v)"; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
anon_kib() { awk '/^RssAnon/ {print $2}' "/proc/$1/status"; }

rm -f "$out"/n*.log
for i in 1 2 3; do start "$i"; done
curl -sf -X POST 127.0.0.1:7201/cluster/init \
  -d '{"members": {"1": "127.0.0.1:7201", "2": "127.0.0.1:7202", "3": "127.0.0.1:7203"}}' >/dev/null
leader=""
for _ in $(seq 100); do
  leader="$(status 1 | field leader_id)"
  [ -n "$leader" ] && break
  sleep 0.1
done
[ -n "$leader" ] || { echo "no leader" >&2; exit 1; }
behind=3
if [ "$leader" = 3 ]; then behind=2; fi
kill -9 "${pids[$behind]}"
echo "leader $leader; node $behind stopped; writing 16 KiB values" >&2

python3 - "127.0.0.1:720$leader" <<'PY'
import http.client, os, sys, threading
addr, total, threads = sys.argv[1], 70000, 16
failed = []
def writer(t):
    c = http.client.HTTPConnection(addr, timeout=60)
    for i in range(t, total, threads):
        # Random bytes: the snapshot is 1.1 GB on disk, not compressed away.
        c.request("PUT", f"/kv/key{i:08d}", body=os.urandom(16384))
        r = c.getresponse(); r.read()
        if r.status != 200:
            failed.append(f"put {i}: {r.status}")
            return
        if t == 0 and i % 8000 == 0:
            print(f"  {i} of {total} written", file=sys.stderr)
ts = [threading.Thread(target=writer, args=(t,)) for t in range(threads)]
for t in ts: t.start()
for t in ts: t.join()
if failed:
    sys.exit(failed[0])
PY
last="$(status "$leader" | field last_log_index)"
for _ in $(seq 600); do
  snap="$(status "$leader" | field snapshot_index)"
  [ -n "$snap" ] && [ "$snap" -ge $((last - 1000)) ] && break
  sleep 0.5
done
snap_bytes="$(du -sb "$dir/n$leader/snapshots" | cut -f1)"
purged="$(status "$leader" | field purged_index)"
echo "snapshot at $snap ($snap_bytes bytes in snapshots/), log purged to $purged" >&2

lp="${pids[$leader]}"
steady=0; steady_anon=0
for _ in $(seq 100); do
  r="$(rss_kib "$lp")"; [ "$r" -gt "$steady" ] && steady="$r"
  a="$(anon_kib "$lp")"; [ "$a" -gt "$steady_anon" ] && steady_anon="$a"
  sleep 0.1
done
target="$(status "$leader" | field last_applied)"
t0="$(date +%s.%N)"
start "$behind"
bp="${pids[$behind]}"
peak=0; peak_anon=0; bpeak=0; banon=0
while :; do
  r="$(rss_kib "$lp")"; [ "$r" -gt "$peak" ] && peak="$r"
  a="$(anon_kib "$lp")"; [ "$a" -gt "$peak_anon" ] && peak_anon="$a"
  b="$(rss_kib "$bp")"; [ "$b" -gt "$bpeak" ] && bpeak="$b"
  a="$(anon_kib "$bp")"; [ "$a" -gt "$banon" ] && banon="$a"
  got="$(status "$behind" | field last_applied || echo 0)"
  [ -n "$got" ] && [ "$got" -ge "$target" ] && break
  sleep 0.1
done
t1="$(date +%s.%N)"
installed="$(status "$behind" | field snapshot_index)"
secs="$(python3 -c "print(f'{$t1 - $t0:.1f}')")"
ratio="$(python3 -c "print(f'{$peak / $steady:.2f}')")"
anon_ratio="$(python3 -c "print(f'{$peak_anon / $steady_anon:.2f}')")"
{
  echo "snapshot_index,snapshot_bytes,follower_snapshot_index,transfer_seconds,leader_steady_rss_kib,leader_peak_rss_kib,peak_over_steady,follower_peak_rss_kib,follower_peak_rss_anon_kib,leader_steady_rss_anon_kib,leader_peak_rss_anon_kib,anon_peak_over_steady"
  echo "$snap,$snap_bytes,$installed,$secs,$steady,$peak,$ratio,$bpeak,$banon,$steady_anon,$peak_anon,$anon_ratio"
} >"$out/snapshot-catchup.csv"
cat "$out/snapshot-catchup.csv"

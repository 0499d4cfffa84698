"""A sievedb-server client: a counter bumped by compare-and-swap, and a scan.

Start a node or a cluster first (docs/guide/src/replication.md), e.g.

    target/release/sievedb-server --id 1 --listen 127.0.0.1:7001 --db /tmp/c/n1 &
    curl -X POST 127.0.0.1:7001/cluster/init -d '{"members": {"1": "127.0.0.1:7001"}}'
    python examples/client.py --addr 127.0.0.1:7001

Several of these running at once never lose an increment: each retries its
compare-and-swap until the value it read is still the one it replaces. A
write whose outcome is unknown (OutcomeUnknownError) is not re-sent blindly:
the next compare-and-swap reads what is there and decides.
"""

from __future__ import annotations

import argparse
import time

import sievedb


def bump(client: sievedb.Client, key: bytes, deadline: float) -> int:
    """Adds 1 to the decimal counter at `key`; the new value."""
    while True:
        old = client.get(key)
        new = (int(old) if old is not None else 0) + 1
        try:
            if client.compare_and_swap(key, old, b"%d" % new):
                return new
        except sievedb.OutcomeUnknownError:
            pass  # it may have applied: the loop reads again and sees
        except sievedb.UnavailableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--addr", default="127.0.0.1:7001", help="a node's HOST:PORT")
    ap.add_argument("--times", type=int, default=10, help="how many increments")
    args = ap.parse_args()

    deadline = time.monotonic() + 30.0
    with sievedb.Client(args.addr, timeout=10.0, follow_leader=True) as client:
        key = b"example/counter"
        start = client.get(key)
        value = 0
        for _ in range(args.times):
            value = bump(client, key, deadline)
        print(f"compare_and_swap: {key!r} went from {start!r} to {value}")

        for name in ("ada", "grace", "alan"):
            client[b"example/user/" + name.encode()] = name.title()
        users = client.scan(b"example/user/", limit=10)
        print("scan:", [(k.decode(), v.decode()) for k, v in users])
        try:
            client[b"example/nobody"]
        except KeyError:
            print("absent: KeyError, and", client.get(b"example/nobody"), "from get")
        status = client.status()
        print(f"node {status['id']}: {status['state']}, leader {status['leader_id']}")


if __name__ == "__main__":
    main()

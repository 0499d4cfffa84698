"""Keyspaces: a small user store with a secondary index, counters and sessions.

One database, four keyspaces with their own keys and options:

- ``users``: user id -> name (the database's options);
- ``by_email``: email -> user id, a secondary index kept in step with
  ``users`` by writing both in one atomic WriteBatch;
- ``counters``: ``merge_operator="u64add"``, little-endian u64 counters
  bumped without a read;
- ``sessions``: ``ttl=3600``, tokens that expire by themselves.

Then a snapshot reads users and index at one point while a rename goes on,
and a reopen shows that the keyspaces and their data survive.

    python examples/keyspaces.py [--dir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import sievedb


def u64(n: int) -> bytes:
    return n.to_bytes(8, "little")


def open_keyspaces(
    db: sievedb.Db[bytes, bytes],
) -> tuple[
    sievedb.Keyspace[bytes, bytes],
    sievedb.Keyspace[bytes, bytes],
    sievedb.Keyspace[bytes, bytes],
    sievedb.Keyspace[bytes, bytes],
]:
    """The same handles on every open (options with a keyspace are per process)."""
    return (
        db.keyspace("users"),
        db.keyspace("by_email"),
        db.keyspace("counters", merge_operator="u64add"),
        db.keyspace("sessions", ttl=3600),
    )


def add_user(
    db: sievedb.Db[bytes, bytes],
    users: sievedb.Keyspace[bytes, bytes],
    by_email: sievedb.Keyspace[bytes, bytes],
    counters: sievedb.Keyspace[bytes, bytes],
    uid: bytes,
    name: bytes,
    email: bytes,
) -> None:
    batch = sievedb.WriteBatch()
    batch.put(uid, name, keyspace=users)
    batch.put(email, uid, keyspace=by_email)
    batch.merge(b"users", u64(1), keyspace=counters)
    db.write(batch)  # all three keyspaces, or none


def change_email(db: sievedb.Db[bytes, bytes], by_email: sievedb.Keyspace[bytes, bytes], uid: bytes, old: bytes, new: bytes) -> None:
    batch = sievedb.WriteBatch()
    batch.delete(old, keyspace=by_email)
    batch.put(new, uid, keyspace=by_email)
    db.write(batch)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--dir", help="where to make the database (default: a temporary directory)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()

    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="sievedb-keyspaces-"))
    path = work / "db"
    out: dict[str, Any] = {}
    try:
        with sievedb.Db(path) as db:
            users, by_email, counters, sessions = open_keyspaces(db)
            add_user(db, users, by_email, counters, b"u1", b"alice", b"alice@example.com")
            add_user(db, users, by_email, counters, b"u2", b"bob", b"bob@example.com")
            sessions[b"token-1"] = b"u1"
            with db.snapshot() as snap:
                change_email(db, by_email, b"u2", b"bob@example.com", b"bob@example.org")
                out["index_at_snapshot"] = [
                    k.decode() for k in snap.keys(keyspace=by_email)
                ]
            out["index_now"] = [k.decode() for k in by_email.keys()]
            out["keyspaces"] = db.list_keyspaces()
        with sievedb.Db(path) as db:
            users, by_email, counters, sessions = open_keyspaces(db)
            out["users_after_reopen"] = {k.decode(): v.decode() for k, v in users.items()}
            out["user_count"] = int.from_bytes(counters[b"users"], "little")
            out["session"] = sessions[b"token-1"].decode()
            out["default_keyspace_keys"] = [k.decode() for k in db.keys()]
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)

    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:>22}: {v}")


if __name__ == "__main__":
    main()

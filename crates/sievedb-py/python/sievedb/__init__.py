"""sievedb: an embedded LSM-tree key-value store whose filters hash a key once.

>>> import sievedb
>>> with sievedb.Db("/tmp/example-db", bits_per_key=10.0) as db:
...     db[b"k"] = b"v"
...     db.get(b"k")
b'v'

A database holds named keyspaces besides its default one, each with its
own keys and options, written together atomically by one WriteBatch:

>>> with sievedb.Db("/tmp/example-db") as db:
...     users = db.keyspace("users")
...     counters = db.keyspace("counters", merge_operator="u64add")
...     batch = sievedb.WriteBatch()
...     batch.put(b"u1", b"alice", keyspace=users)
...     batch.merge(b"signups", (1).to_bytes(8, "little"), keyspace=counters)
...     db.write(batch)
...     users[b"u1"], b"u1" in db
(b'alice', False)

A transaction reads at a snapshot under its own writes and commits them
atomically, or raises :class:`sievedb.ConflictError` (and writes nothing):

>>> with sievedb.Db("/tmp/example-db") as db:
...     db[b"alice"] = b"10"
...     with db.transaction() as tx:
...         balance = int(tx.get_for_update(b"alice"))
...         tx[b"alice"] = b"%d" % (balance - 3)
...         tx[b"bob"] = b"3"
...     db[b"alice"], db[b"bob"]
(b'7', b'3')

Keys and values are bytes (str is accepted and encoded as UTF-8, and any
contiguous buffer: bytearray, memoryview, array.array). Every engine error
is a subclass of :class:`sievedb.Error`; I/O errors are the
:class:`OSError` subclass of their errno (``FileNotFoundError``,
``PermissionError``, ...) with ``errno``, ``strerror`` and ``filename``. Opening a database whose recovery dropped data (a damaged
or torn log) warns with :class:`sievedb.RecoveryWarning`; what was dropped
is in ``Db.recovery_report()``.
"""

from ._sievedb import (
    FILTER_POLICIES,
    KEYSPACE_OPTIONS,
    OPTIONS,
    BusyError,
    ClosedError,
    ConflictError,
    CorruptionError,
    Cursor,
    DatabaseNotFoundError,
    Db,
    Error,
    InvalidArgumentError,
    Iterator,
    Keyspace,
    LockedError,
    MergeFailedError,
    PoisonedError,
    ReadOnlyError,
    RecoveryWarning,
    Snapshot,
    Transaction,
    UnsupportedError,
    WriteBatch,
    __version__,
)

__all__ = [
    "Db",
    "Keyspace",
    "WriteBatch",
    "Snapshot",
    "Transaction",
    "Iterator",
    "Cursor",
    "Error",
    "CorruptionError",
    "InvalidArgumentError",
    "DatabaseNotFoundError",
    "LockedError",
    "BusyError",
    "PoisonedError",
    "UnsupportedError",
    "ReadOnlyError",
    "ClosedError",
    "MergeFailedError",
    "ConflictError",
    "RecoveryWarning",
    "OPTIONS",
    "KEYSPACE_OPTIONS",
    "FILTER_POLICIES",
    "__version__",
]

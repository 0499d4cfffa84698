"""sievedb: an embedded LSM-tree key-value store whose filters hash a key once.

>>> import sievedb
>>> with sievedb.Db("/tmp/example-db", bits_per_key=10.0) as db:
...     db[b"k"] = b"v"
...     db.get(b"k")
b'v'

Keys and values are bytes (str is accepted and encoded as UTF-8). Every
engine error is a subclass of :class:`sievedb.Error`; I/O errors are
:class:`OSError`.
"""

from ._sievedb import (
    FILTER_POLICIES,
    OPTIONS,
    BusyError,
    ClosedError,
    CorruptionError,
    Db,
    Error,
    InvalidArgumentError,
    Iterator,
    LockedError,
    MergeFailedError,
    PoisonedError,
    ReadOnlyError,
    Snapshot,
    UnsupportedError,
    WriteBatch,
)

__all__ = [
    "Db",
    "WriteBatch",
    "Snapshot",
    "Iterator",
    "Error",
    "CorruptionError",
    "InvalidArgumentError",
    "LockedError",
    "BusyError",
    "PoisonedError",
    "UnsupportedError",
    "ReadOnlyError",
    "ClosedError",
    "MergeFailedError",
    "OPTIONS",
    "FILTER_POLICIES",
]

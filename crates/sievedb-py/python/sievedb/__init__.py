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

Db, Keyspace and Snapshot are collections.abc mappings (mutable but the
snapshot): ``len()``, ``update()``, ``pop()``, ``setdefault()``,
``popitem()``, ``clear()``, ``==`` with any mapping, and re-iterable
``keys()``/``values()``/``items()`` views that take ``start``, ``end`` and
``reverse``:

>>> with sievedb.Db("/tmp/example-db") as db:
...     db.clear()
...     db.update({b"a": b"1", b"b": b"2"}, c=b"3")
...     len(db), list(db.keys(start=b"b")), db.pop(b"a"), db.popitem()
(3, [b'b', b'c'], b'1', (b'c', b'3'))

Values are bytes unless the database is opened with ``serializer="pickle"``,
``"json"`` or an object with ``dumps``/``loads`` (or ``decode="utf-8"``
for str values); ``str_keys=True`` reads keys as str.

Keys and values are bytes (str is accepted and encoded as UTF-8, and any
contiguous buffer: bytearray, memoryview, array.array). Every engine error
is a subclass of :class:`sievedb.Error`; I/O errors are the
:class:`OSError` subclass of their errno (``FileNotFoundError``,
``PermissionError``, ...) with ``errno``, ``strerror`` and ``filename``. Opening a database whose recovery dropped data (a damaged
or torn log) warns with :class:`sievedb.RecoveryWarning`; what was dropped
is in ``Db.recovery_report()``.

``sievedb.Client("host:port")`` is a client of a ``sievedb-server`` cluster
over its HTTP API (pure Python, see :mod:`sievedb.client`): ``get``, ``put``,
``delete``, ``scan``, ``txn``, ``compare_and_swap``, ``status`` and the dict
protocol, raising subclasses of :class:`sievedb.ClientError`.
"""

from collections import abc as _abc

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
    ItemsView,
    Iterator,
    Keyspace,
    KeysView,
    LockedError,
    MergeFailedError,
    PoisonedError,
    ReadOnlyError,
    RecoveryWarning,
    Snapshot,
    Transaction,
    UnsupportedError,
    ValuesView,
    WriteBatch,
    __version__,
)
from .client import (
    BadRequestError,
    Client,
    ClientError,
    NotLeaderError,
    OutcomeUnknownError,
    UnavailableError,
    UnreachableError,
)

# Db and Keyspace are mutable mappings, a Snapshot a read-only one; their
# views are the ABCs' views (each method is the extension's own: the
# registration adds no mixin method, it makes isinstance() true).
_abc.MutableMapping.register(Db)
_abc.MutableMapping.register(Keyspace)
_abc.Mapping.register(Snapshot)
_abc.KeysView.register(KeysView)
_abc.ValuesView.register(ValuesView)
_abc.ItemsView.register(ItemsView)

__all__ = [
    "Db",
    "Keyspace",
    "WriteBatch",
    "Snapshot",
    "Transaction",
    "Iterator",
    "Cursor",
    "KeysView",
    "ValuesView",
    "ItemsView",
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
    "Client",
    "ClientError",
    "BadRequestError",
    "NotLeaderError",
    "UnavailableError",
    "OutcomeUnknownError",
    "UnreachableError",
    "OPTIONS",
    "KEYSPACE_OPTIONS",
    "FILTER_POLICIES",
    "__version__",
]

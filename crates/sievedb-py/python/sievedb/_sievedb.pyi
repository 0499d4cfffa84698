"""Type stubs of the extension module behind the `sievedb` package."""

from __future__ import annotations

import builtins
import collections.abc as _abc
import os
import pathlib
from typing import (
    Any,
    ClassVar,
    Generic,
    Iterable,
    Iterator as _Iterator,
    Literal,
    Optional,
    Protocol,
    Tuple,
    TypedDict,
    TypeVar,
    Union,
    overload,
)

from typing_extensions import Buffer

Key = Union[str, Buffer]
"""bytes, str (encoded as UTF-8), or any contiguous buffer (bytearray,
memoryview, array.array, ...)."""
Value = Union[str, Buffer]
_T = TypeVar("_T")
_K = TypeVar("_K")
_V = TypeVar("_V")
_K2 = TypeVar("_K2")
_V2 = TypeVar("_V2")
# A key as a mapping's methods take it: the type its keys come back as, or
# any bytes-like or str (str is encoded as UTF-8).
_KeyArg = Union[_K, bytes, bytearray, str]

__version__: str
"""The package's version (the crate's)."""

OPTIONS: list[str]
"""Every keyword option `Db(...)` accepts."""
KEYSPACE_OPTIONS: list[str]
"""Every keyword option `Db.keyspace(name, ...)` accepts."""
FILTER_POLICIES: list[str]
"""The names `filter_policy=` accepts."""

class _LostTable(TypedDict):
    """A table `Db.repair` could not read in full: damaged (read in part) or
    missing (listed by the MANIFEST, not in the directory)."""

    number: int
    keyspace: str
    """Its keyspace's name ("default"; "" when nothing says)."""
    level: Optional[int]
    entries: Optional[int]
    """What it held: its properties' count, else the MANIFEST's; None if neither is readable."""
    salvaged: int
    lost: int
    """entries - salvaged (0 when entries is None)."""
    smallest: bytes
    largest: bytes
    blocks_salvaged: int
    blocks_lost: Optional[int]
    range_dels_lost: int
    method: Literal["Index", "Scan", "Nothing"]
    """How its data blocks were found: through its index, by a scan of the file, or not at all."""
    detail: str
    """Why: the error of reading it in full, or that it is missing."""

class _RepairReport(TypedDict):
    """What `Db.repair` found and did (the Rust `RepairReport`)."""

    tables_read: int
    tables_damaged: int
    damaged_tables: list[_LostTable]
    tables_missing: list[_LostTable]
    entries_salvaged: int
    entries_lost: int
    """The entries of the missing tables plus, per damaged table, entries - salvaged."""
    wals_read: int
    wals_damaged: int
    wals_stale: int
    wal_entries: int
    entries_read: int
    entries_kept: int
    level: int
    output_files: list[int]
    output_bytes: int
    manifest_number: int
    last_sequence: int
    keyspaces: list[str]
    manifests_replaced: int
    lost_files: list[str]

class Error(Exception):
    """The base class of every error sievedb raises (I/O errors are OSError)."""

class CorruptionError(Error): ...
class InvalidArgumentError(Error): ...
class LockedError(Error): ...
class BusyError(Error): ...
class PoisonedError(Error): ...
class UnsupportedError(Error): ...
class ReadOnlyError(Error): ...
class ClosedError(Error): ...

class DatabaseNotFoundError(InvalidArgumentError, FileNotFoundError):
    """Opening (create_if_missing=False, or Db.open_read_only) or repairing a
    database whose directory does not exist: errno ENOENT, `filename` the
    path."""
class RecoveryWarning(UserWarning):
    """Opening the database dropped data recovery could not apply: see Db.recovery_report()."""

class MergeFailedError(Error):
    """A key's merge operands could not be combined (no merge_operator, or it refused them)."""

_ConflictKind = Literal["write", "read", "too_old", "lock_timeout", "deadlock"]

class ConflictError(Error):
    """A transaction failed its check and wrote nothing; retry it as a new
    transaction. Raised by the call that failed (a commit, or in a
    pessimistic transaction a lock wait) and by every later call on that
    transaction but `rollback()`."""

    kind: Optional[_ConflictKind]
    """Why (None for one raised from Python):

    - "write": a key it wrote, or read with get_for_update, was written by
      another commit after its snapshot (first committer wins);
    - "read": serializable only: a key it read, or a key in a range it
      iterated, was written after its snapshot;
    - "too_old": it stayed open past the flush of the memtable that was
      current when it began, so its commit could not be checked;
    - "lock_timeout": pessimistic only: a key's lock was not released
      within lock_timeout;
    - "deadlock": pessimistic only: waiting for a lock would have closed a
      cycle of waiting transactions."""

class Iterator(_Iterator[Any]):
    """An iterator over a key range: (key, value) tuples, keys or values. It
    reads one consistent view: writes made after it was created are not seen."""
    def __iter__(self) -> Iterator: ...
    def __next__(self) -> Any: ...
    def close(self) -> None:
        """Releases the iterator's view of the database at once."""

class _Serializer(Protocol):
    """What `serializer=` takes besides a name: `dumps(value)` returns bytes
    (or str, stored as UTF-8), `loads(bytes)` the value."""
    def dumps(self, value: Any, /) -> Union[bytes, str]: ...
    def loads(self, data: bytes, /) -> Any: ...

Serializer = Union[Literal["pickle", "json", "bytes"], _Serializer]

class KeysView(_abc.KeysView[_K]):
    """The keys of a key range (`db.keys(start=None, end=None, reverse=False)`),
    re-iterable: each iteration, `len()` (a counting scan, O(n)) or `in` (one
    read) is a fresh consistent read; raises ClosedError once the database is
    closed. Set operations (&, |, -, ^, isdisjoint, <, <=, >, >=) build sets
    and give a plain `set`, as a dict's keys view."""
    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> _Iterator[_K]: ...
    def __reversed__(self) -> _Iterator[_K]: ...
    def __contains__(self, key: object) -> bool: ...

class ValuesView(_abc.ValuesView[_V]):
    """The values of a key range in key order (`db.values(...)`): re-iterable;
    `len()` counts (O(n)), `in` scans."""
    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> _Iterator[_V]: ...
    def __reversed__(self) -> _Iterator[_V]: ...
    def __contains__(self, value: object) -> bool: ...

class ItemsView(_abc.ItemsView[_K, _V]):
    """The (key, value) pairs of a key range (`db.items(...)`): re-iterable;
    `len()` counts (O(n)), `(k, v) in view` is one read; set operations give
    plain sets (of hashable values only)."""
    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> _Iterator[Tuple[_K, _V]]: ...
    def __reversed__(self) -> _Iterator[Tuple[_K, _V]]: ...
    def __contains__(self, item: object) -> bool: ...

class Cursor(Generic[_K, _V]):
    """A seekable cursor over a key range as of the moment it was made
    (rocksdict's RdictIter): `db.iter()`, `ks.iter()`, `snap.iter()`. It
    starts on no entry; the seeks position it, `next()`/`prev()` move one
    entry. `key()`, `value()`, `item()`, `next()` and `prev()` on a cursor
    that is not `valid()` raise InvalidArgumentError; after `db.close()`
    or `close()` every call raises ClosedError."""
    def seek_to_first(self) -> None:
        """Positions the cursor on the first key of its range."""
    def seek_to_last(self) -> None:
        """Positions the cursor on the last key of its range."""
    def seek(self, key: Key) -> None:
        """Positions the cursor on the first key >= `key`."""
    def seek_for_prev(self, key: Key) -> None:
        """Positions the cursor on the last key <= `key`."""
    def valid(self) -> bool:
        """Whether the cursor stands on an entry."""
    def key(self) -> _K: ...
    def value(self) -> _V:
        """The value, through the serializer (bytes without one)."""
    def item(self) -> Tuple[_K, _V]:
        """`(key(), value())`."""
    def next(self) -> None:
        """Moves to the next key (not valid after the last one)."""
    def prev(self) -> None:
        """Moves to the previous key (not valid before the first one)."""
    def close(self) -> None:
        """Releases the cursor's view of the database at once."""
    def __enter__(self) -> Cursor[_K, _V]: ...
    def __exit__(self, *args: object) -> Literal[False]: ...

class WriteBatch:
    """Writes applied all together or not at all by `Db.write(batch)`, in the
    default keyspace or, with `keyspace=ks`, in `ks`. A put with
    `keyspace=ks` goes through `ks`'s serializer; one without is bound to no
    database yet, so its value must be bytes or str, stored as is."""
    def __init__(self) -> None: ...
    @overload
    def put(self, key: Key, value: Value, keyspace: None = None) -> None: ...
    @overload
    def put(self, key: Key, value: Any, keyspace: Keyspace[Any, Any]) -> None: ...
    def delete(self, key: Key, keyspace: Optional[Keyspace[Any, Any]] = None) -> None: ...
    def merge(
        self, key: Key, operand: Value, keyspace: Optional[Keyspace[Any, Any]] = None
    ) -> None: ...
    def delete_range(
        self,
        start: Optional[Key] = None,
        end: Optional[Key] = None,
        keyspace: Optional[Keyspace[Any, Any]] = None,
    ) -> None: ...
    def clear(self) -> None: ...
    def size_in_bytes(self) -> int: ...
    def __len__(self) -> int: ...
    def __setitem__(self, key: Key, value: Value) -> None:
        """`batch[key] = value`: `put(key, value)`."""
    def __delitem__(self, key: Key) -> None:
        """`del batch[key]`: `delete(key)` (no KeyError)."""
    def write(self) -> None:
        """A batch of `db.write_batch()`: writes it now, atomically, and
        clears it. TypeError for a `WriteBatch()` made directly."""
    def __enter__(self) -> WriteBatch:
        """Only a batch of `db.write_batch()` (TypeError otherwise)."""
    def __exit__(
        self, exc_type: object = None, exc: object = None, tb: object = None
    ) -> Literal[False]:
        """Writes the batch (and clears it) if the block ended normally;
        discards it if the block raised. Never swallows the exception."""

class Snapshot(_abc.Mapping[_K, _V]):
    """A point-in-time view of every keyspace (`keyspace=ks`: read `ks`, else
    the default keyspace); a context manager that releases it. A read-only
    Mapping of the default keyspace: `iter()`, `len()` (a counting scan),
    `reversed()`, `==` with any mapping; `keys()`/`values()`/`items()` are
    views. Values go through the database's serializer (`ks`'s with
    `keyspace=ks`)."""
    @overload
    def get(self, key: _KeyArg[_K]) -> Optional[_V]: ...
    @overload
    def get(self, key: _KeyArg[_K], default: Union[_V, _T]) -> Union[_V, _T]: ...
    @overload
    def get(self, key: _KeyArg[_K], default: Any = None, *, keyspace: Keyspace[Any, Any]) -> Any: ...
    @overload
    def items(
        self,
        start: Optional[Key] = None,
        end: Optional[Key] = None,
        reverse: bool = False,
        keyspace: None = None,
    ) -> ItemsView[_K, _V]: ...
    @overload
    def items(
        self,
        start: Optional[Key] = None,
        end: Optional[Key] = None,
        reverse: bool = False,
        *,
        keyspace: Keyspace[_K2, _V2],
    ) -> ItemsView[_K2, _V2]: ...
    @overload
    def keys(
        self,
        start: Optional[Key] = None,
        end: Optional[Key] = None,
        reverse: bool = False,
        keyspace: None = None,
    ) -> KeysView[_K]: ...
    @overload
    def keys(
        self,
        start: Optional[Key] = None,
        end: Optional[Key] = None,
        reverse: bool = False,
        *,
        keyspace: Keyspace[_K2, _V2],
    ) -> KeysView[_K2]: ...
    @overload
    def values(
        self,
        start: Optional[Key] = None,
        end: Optional[Key] = None,
        reverse: bool = False,
        keyspace: None = None,
    ) -> ValuesView[_V]: ...
    @overload
    def values(
        self,
        start: Optional[Key] = None,
        end: Optional[Key] = None,
        reverse: bool = False,
        *,
        keyspace: Keyspace[_K2, _V2],
    ) -> ValuesView[_V2]: ...
    def prefix(
        self, prefix: Key, reverse: bool = False, keyspace: Optional[Keyspace[Any, Any]] = None
    ) -> _Iterator[Tuple[Any, Any]]: ...
    @property
    def sequence(self) -> int: ...
    def release(self) -> None: ...
    def __enter__(self) -> Snapshot[_K, _V]: ...
    def __exit__(self, *args: object) -> bool: ...
    def __contains__(self, key: object) -> bool: ...
    def __getitem__(self, key: _KeyArg[_K]) -> _V: ...
    # The mapping protocol.
    def __iter__(self) -> _Iterator[_K]: ...
    def __reversed__(self) -> _Iterator[_K]: ...
    def __len__(self) -> int:
        """A counting scan of the keys, O(n)."""
    def __bool__(self) -> bool:
        """One seek."""
    def __eq__(self, other: object) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]
    def iter(
        self,
        start: Optional[Key] = None,
        end: Optional[Key] = None,
        keyspace: Optional[Keyspace[Any, Any]] = None,
    ) -> Cursor[Any, Any]:
        """A seekable cursor over `[start, end)` as of the snapshot."""
    def iterator(
        self,
        reverse: bool = False,
        start: Optional[Key] = None,
        stop: Optional[Key] = None,
        include_start: bool = True,
        include_stop: bool = False,
        prefix: Optional[Key] = None,
        include_key: bool = True,
        include_value: bool = True,
        keyspace: Optional[Keyspace[Any, Any]] = None,
    ) -> Iterator:
        """plyvel's iterator as of the snapshot (see `Db.iterator`)."""

class Transaction(Generic[_K, _V]):
    """A transaction: `db.transaction(...)`. Its reads see its snapshot (taken
    when it began) under its own pending writes; its writes commit together,
    atomically across keyspaces, or not at all.

    `with db.transaction() as tx:` commits at the end of the block, or rolls
    back if the block raises (the exception goes on); a conflict of that
    commit raises ConflictError. Reads and writes go to the default keyspace,
    or with `keyspace=ks` to `ks`. After commit() or rollback() every call
    raises InvalidArgumentError; after `db.close()` (which rolls back an
    open transaction) ClosedError. The object may be used from any thread;
    reads, iteration, the commit and a pessimistic transaction's writes
    (which may wait for a lock) release the GIL. Values go through the
    database's serializer (`ks`'s with `keyspace=ks`); `items()` and the
    like are iterators, not views."""

    @overload
    def get(self, key: Key) -> Optional[_V]:
        """The value of `key` as the transaction sees it, or None/`default`."""
    @overload
    def get(self, key: Key, default: Union[_V, _T]) -> Union[_V, _T]: ...
    @overload
    def get(self, key: Key, default: Any = None, *, keyspace: Keyspace[Any, Any]) -> Any: ...
    @overload
    def get_for_update(self, key: Key) -> Optional[_V]:
        """`get`, and the commit fails (ConflictError "write") if another
        commit writes `key` after the snapshot; a pessimistic transaction
        locks `key` until it ends, waiting up to `lock_timeout` for another's
        lock."""
    @overload
    def get_for_update(self, key: Key, default: Union[_V, _T]) -> Union[_V, _T]: ...
    @overload
    def get_for_update(
        self, key: Key, default: Any = None, *, keyspace: Keyspace[Any, Any]
    ) -> Any: ...
    def put(self, key: Key, value: Any, keyspace: Optional[Keyspace[Any, Any]] = None) -> None:
        """Sets `key` to `value` when the transaction commits (a pessimistic
        transaction locks `key` first)."""
    def delete(self, key: Key, keyspace: Optional[Keyspace[Any, Any]] = None) -> None:
        """Deletes `key` when the transaction commits (nothing happens if it
        is absent)."""
    def merge(
        self, key: Key, operand: Value, keyspace: Optional[Keyspace[Any, Any]] = None
    ) -> None:
        """Merges `operand` into `key` when the transaction commits, through
        the keyspace's `merge_operator`; its own reads see the merged value."""
    def items(
        self,
        start: Optional[Key] = None,
        end: Optional[Key] = None,
        reverse: bool = False,
        keyspace: Optional[Keyspace[Any, Any]] = None,
    ) -> _Iterator[Tuple[Any, Any]]:
        """(key, value) pairs of `[start, end)` as the transaction sees them:
        its pending writes (as they are when the iterator is made) over its
        snapshot. Serializable: a commit into the range after the snapshot
        fails the transaction's commit."""
    def keys(
        self,
        start: Optional[Key] = None,
        end: Optional[Key] = None,
        reverse: bool = False,
        keyspace: Optional[Keyspace[Any, Any]] = None,
    ) -> _Iterator[Any]:
        """Keys of `[start, end)` as the transaction sees them."""
    def values(
        self,
        start: Optional[Key] = None,
        end: Optional[Key] = None,
        reverse: bool = False,
        keyspace: Optional[Keyspace[Any, Any]] = None,
    ) -> _Iterator[Any]:
        """Values of `[start, end)` as the transaction sees them, in key order."""
    def prefix(
        self, prefix: Key, reverse: bool = False, keyspace: Optional[Keyspace[Any, Any]] = None
    ) -> _Iterator[Tuple[Any, Any]]:
        """(key, value) pairs of the keys starting with `prefix`."""
    def set_savepoint(self) -> None:
        """Marks the writes so far; `rollback_to_savepoint()` undoes those
        made after. Savepoints nest."""
    def rollback_to_savepoint(self) -> None:
        """Undoes the writes since the last savepoint and forgets it (locks
        taken since stay held; reads since still count for the commit's
        check). InvalidArgumentError if no savepoint is set."""
    def commit(self, sync: bool = False) -> None:
        """Commits every pending write, atomically across keyspaces
        (`sync=True`: durable when it returns). ConflictError if its check
        fails: nothing is written and the transaction is over."""
    def rollback(self) -> None:
        """Drops the pending writes and releases the locks and snapshot; the
        transaction ends (also one whose commit failed)."""
    @property
    def snapshot_sequence(self) -> int:
        """The sequence number its snapshot reads at."""
    @property
    def pessimistic(self) -> bool: ...
    @property
    def isolation(self) -> Literal["snapshot", "serializable"]: ...
    def __enter__(self) -> Transaction[_K, _V]: ...
    def __exit__(
        self, exc_type: object = None, exc: object = None, tb: object = None
    ) -> bool:
        """Commits if the block ended normally, rolls back if it raised; does
        nothing if the transaction ended inside the block. Never swallows
        the exception."""
    def __getitem__(self, key: Key) -> _V:
        """`tx[key]`: KeyError if the transaction sees it absent."""
    def __setitem__(self, key: Key, value: _V) -> None: ...
    def __delitem__(self, key: Key) -> None:
        """`del tx[key]`: KeyError if the transaction sees it absent."""
    def __contains__(self, key: Key) -> bool: ...
    def __iter__(self) -> _Iterator[_K]:
        """The keys, as `iter(db)`; `tx.items()` for (key, value) pairs."""

class _Store(_abc.MutableMapping[_K, _V]):
    """The mapping surface Db and Keyspace share (a stub only: no runtime
    class).

    A `collections.abc.MutableMapping` (registered): `len()` is a counting
    scan of every key, O(n), GIL released (`list(db)` calls it first to size
    the list: `list(iter(db))` scans once); `bool()` is one seek; `update()`
    writes one WriteBatch, atomically; `popitem()` pops the last (largest)
    key; `clear()` is one delete_range; `copy()` gives a dict; `==` compares
    the pairs with any mapping, so the object is unhashable, as a dict.

    Keys are bytes or str (UTF-8), never serialized, and come back as bytes
    (str with `str_keys=True`); values as the `serializer`/`decode` of the
    database makes them (bytes by default)."""

    @overload
    def get(self, key: _KeyArg[_K]) -> Optional[_V]: ...
    @overload
    def get(self, key: _KeyArg[_K], default: Union[_V, _T]) -> Union[_V, _T]: ...
    def put(self, key: Key, value: _V, sync: bool = False) -> None: ...
    def delete(self, key: Key, sync: bool = False) -> None: ...
    def merge(self, key: Key, operand: Value, sync: bool = False) -> None:
        """Merges `operand` (raw bytes: never serialized) into `key` through
        `merge_operator`."""
    def delete_range(
        self, start: Optional[Key] = None, end: Optional[Key] = None, sync: bool = False
    ) -> None: ...
    def multi_get(self, keys: Iterable[Key]) -> list[Optional[_V]]: ...
    def items(
        self, start: Optional[Key] = None, end: Optional[Key] = None, reverse: bool = False
    ) -> ItemsView[_K, _V]: ...
    def keys(
        self, start: Optional[Key] = None, end: Optional[Key] = None, reverse: bool = False
    ) -> KeysView[_K]: ...
    def values(
        self, start: Optional[Key] = None, end: Optional[Key] = None, reverse: bool = False
    ) -> ValuesView[_V]: ...
    def prefix(self, prefix: Key, reverse: bool = False) -> _Iterator[Tuple[_K, _V]]: ...
    def iter(self, start: Optional[Key] = None, end: Optional[Key] = None) -> Cursor[_K, _V]:
        """A seekable cursor over `[start, end)` (rocksdict's `iter()`)."""
    def iterator(
        self,
        reverse: bool = False,
        start: Optional[Key] = None,
        stop: Optional[Key] = None,
        include_start: bool = True,
        include_stop: bool = False,
        prefix: Optional[Key] = None,
        include_key: bool = True,
        include_value: bool = True,
    ) -> Iterator:
        """plyvel's iterator: (key, value) pairs, keys (include_value=False)
        or values (include_key=False) from `start` to `stop`, or of the keys
        starting with `prefix` (TypeError with start or stop)."""
    def key_may_exist(self, key: Key) -> bool:
        """False if `key` surely does not exist; True if it may (a filter
        probe: no block is read)."""
    def write_batch(self, sync: bool = False) -> WriteBatch:
        """A WriteBatch written atomically at the end of a `with` block
        (not at all if the block raises), plyvel's `transaction=True`."""
    def compact_range(self, start: Optional[Key] = None, end: Optional[Key] = None) -> None: ...
    def stats(self) -> dict[str, Any]: ...
    def __getitem__(self, key: _KeyArg[_K]) -> _V: ...
    def __setitem__(self, key: _KeyArg[_K], value: _V) -> None: ...
    def __delitem__(self, key: _KeyArg[_K]) -> None: ...
    def __contains__(self, key: object) -> bool: ...
    def __iter__(self) -> _Iterator[_K]: ...
    # The mapping protocol.
    def __len__(self) -> int: ...
    def __bool__(self) -> bool: ...
    def __reversed__(self) -> _Iterator[_K]: ...
    @overload  # type: ignore[override]
    def update(self, other: _abc.Mapping[Key, _V], /, **kw: _V) -> None: ...
    @overload
    def update(self, other: Iterable[Tuple[Key, _V]], /, **kw: _V) -> None: ...
    @overload
    def update(self, /, **kw: _V) -> None: ...
    @overload
    def pop(self, key: _KeyArg[_K]) -> _V: ...
    @overload
    def pop(self, key: _KeyArg[_K], default: Union[_V, _T]) -> Union[_V, _T]: ...
    def setdefault(self, key: _KeyArg[_K], default: _V = ...) -> _V:
        """The value of `key`; if absent, sets it to `default` first. Without
        a serializer `default` must be bytes or str (`setdefault(k)` of an
        absent key raises TypeError). A mutable default is stored as a copy."""
    def popitem(self) -> Tuple[_K, _V]: ...
    def clear(self) -> None: ...
    def copy(self) -> dict[_K, _V]: ...
    def __eq__(self, other: object) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

class Keyspace(_Store[_K, _V]):
    """One keyspace of a database: `db.keyspace(name, **options)`; the same
    reads and writes as `Db`, and the same mapping protocol. Raises
    ClosedError after `db.close()` and InvalidArgumentError after
    `db.drop_keyspace(name)`."""
    @property
    def name(self) -> str: ...

class Db(_Store[_K, _V]):
    """An open sievedb database: `Db(path, **options)`; see `OPTIONS`.

    `serializer="pickle"`, `"json"` or an object with dumps/loads makes its
    values (in every read and write, its iterators, views, snapshots,
    transactions and keyspaces) Python objects; `decode="utf-8"` reads them
    as str (not with serializer); `str_keys=True` reads keys as str. Keys
    are never serialized, nor merge operands. Only unpickle data you trust."""
    @overload
    def __init__(
        self: Db[bytes, bytes],
        path: Union[str, os.PathLike[str]],
        *,
        serializer: Optional[Literal["bytes"]] = None,
        decode: None = None,
        str_keys: Literal[False] = False,
        **options: Any,
    ) -> None: ...
    @overload
    def __init__(
        self: Db[str, bytes],
        path: Union[str, os.PathLike[str]],
        *,
        serializer: Optional[Literal["bytes"]] = None,
        decode: None = None,
        str_keys: Literal[True],
        **options: Any,
    ) -> None: ...
    @overload
    def __init__(
        self: Db[bytes, str],
        path: Union[str, os.PathLike[str]],
        *,
        decode: str,
        str_keys: Literal[False] = False,
        **options: Any,
    ) -> None: ...
    @overload
    def __init__(
        self: Db[str, str],
        path: Union[str, os.PathLike[str]],
        *,
        decode: str,
        str_keys: Literal[True],
        **options: Any,
    ) -> None: ...
    @overload
    def __init__(
        self: Db[bytes, Any],
        path: Union[str, os.PathLike[str]],
        *,
        serializer: Serializer,
        str_keys: Literal[False] = False,
        **options: Any,
    ) -> None: ...
    @overload
    def __init__(
        self: Db[str, Any],
        path: Union[str, os.PathLike[str]],
        *,
        serializer: Serializer,
        str_keys: Literal[True],
        **options: Any,
    ) -> None: ...
    @overload
    def __init__(
        self: Db[Any, Any], path: Union[str, os.PathLike[str]], **options: Any
    ) -> None:
        """Options from a dict typed loosely (`**dict[str, object]`)."""
    @staticmethod
    def open_read_only(
        path: Union[str, os.PathLike[str]],
        *,
        serializer: Optional[Serializer] = None,
        decode: Optional[str] = None,
        str_keys: Optional[bool] = None,
        **options: Any,
    ) -> Db[Any, Any]: ...
    @staticmethod
    def repair(path: Union[str, os.PathLike[str]], **options: Any) -> _RepairReport: ...
    def write(self, batch: WriteBatch, sync: bool = False) -> None: ...
    def snapshot(self) -> Snapshot[_K, _V]: ...
    def transaction(
        self,
        pessimistic: bool = False,
        isolation: Literal["snapshot", "serializable"] = "snapshot",
        lock_timeout: float = 1.0,
        deadlock_detect: bool = True,
    ) -> Transaction[_K, _V]:
        """A new transaction. Optimistic by default (no locks: the commit is
        checked against what committed since its snapshot); `pessimistic=True`
        locks each key it writes or reads with get_for_update until it ends,
        waiting up to `lock_timeout` seconds for a lock another holds, and,
        with `deadlock_detect`, failing at once a wait that would deadlock.
        `isolation="snapshot"` fails a commit whose written (or
        get_for_update) keys were written since its snapshot;
        `"serializable"` also checks the keys it read and the ranges it
        iterated (no write skew, no phantoms). ValueError for a bad option."""
    @overload
    def keyspace(
        self,
        name: str,
        *,
        serializer: None = None,
        decode: None = None,
        str_keys: None = None,
        **options: Any,
    ) -> Keyspace[_K, _V]:
        """Opens (creating it if missing) keyspace `name`; see `KEYSPACE_OPTIONS`.
        It inherits the database's serializer/decode/str_keys unless given
        (`serializer="bytes"`: none)."""
    @overload
    def keyspace(
        self,
        name: str,
        *,
        serializer: Optional[Serializer] = None,
        decode: Optional[str] = None,
        str_keys: Optional[bool] = None,
        **options: Any,
    ) -> Keyspace[Any, Any]: ...
    def default_keyspace(self) -> Keyspace[_K, _V]: ...
    def list_keyspaces(self) -> list[str]: ...
    def drop_keyspace(self, name: str) -> None: ...
    def recovery_report(self) -> dict[str, Any]: ...
    def property(self, name: str) -> Optional[str]: ...
    def property_int(self, name: str) -> Optional[int]: ...
    def checkpoint(self, dir: Union[str, os.PathLike[str]]) -> None: ...
    def flush(self) -> None: ...
    def wait_for_compactions(self) -> None: ...
    def approximate_size(self, start: Optional[Key] = None, end: Optional[Key] = None) -> int: ...
    def close(self) -> None: ...
    # builtins.property: the method `property` above shadows the decorator here.
    @builtins.property
    def closed(self) -> bool: ...
    @builtins.property
    def path(self) -> pathlib.Path: ...
    def __enter__(self) -> Db[_K, _V]: ...
    def __exit__(self, *args: object) -> bool: ...

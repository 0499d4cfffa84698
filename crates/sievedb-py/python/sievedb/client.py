"""sievedb.Client: a client of sievedb-server's HTTP API, in pure Python.

>>> import sievedb
>>> with sievedb.Client("127.0.0.1:7001") as c:   # doctest: +SKIP
...     c[b"greeting"] = b"hello"                  # PUT /kv/greeting
...     c.get(b"greeting"), c.get(b"nope")
(b'hello', None)

Keys and values are bytes (str is encoded as UTF-8, and bytearray and
memoryview are accepted, as ``sievedb.Db`` does); what comes back is bytes.
Reads are linearizable unless ``stale=True`` (the client's default, or per
call), which reads the node's own state machine without a Raft round.

Errors are subclasses of :class:`ClientError` (itself a ``sievedb.Error``):

- :class:`BadRequestError`: 400, the request is malformed (an empty key, a
  bad limit);
- :class:`NotLeaderError`: 421 from a node started with ``--no-forward``;
  ``leader_id`` and ``leader_addr`` say where the leader is (None while no
  leader is known). ``Client(..., follow_leader=True)`` sends the request
  once more to that address instead (for that request only);
- :class:`UnavailableError`: 503, no quorum or no leader within the
  server's request timeout, or no answer within the client's ``timeout``;
- :class:`OutcomeUnknownError` (an ``UnavailableError``): a **write**
  (``put``, ``delete``, ``txn``, ...) whose outcome is unknown: it may have
  been applied, or may still be. Any 503 to a write is one (the server
  answers 503 both to a forward that failed midway and to a write that its
  leader proposed but could not commit in time, which a quorum may still
  commit later), and so is a connection lost, or a ``timeout``, once the
  request was sent. Re-sending a write after it may apply it twice; a
  ``txn`` with a compare is the way to make a retry safe;
- :class:`UnreachableError`: no connection could be made (nothing was sent).

Reads that fail on a connection the client reused (the server closed it
meanwhile) are re-sent once on a new connection; writes never are.

Threads: one ``Client`` may be shared by any number of threads; each thread
has its own persistent HTTP/1.1 connection per server address
(``threading.local``), opened on its first request and reopened after a
failure. ``close()`` closes every thread's connections; the client raises
``ClientError`` after it. Not for use across ``fork()``.
"""

from __future__ import annotations

import base64
import http.client
import json
import select
import socket
import threading
import urllib.parse
import weakref
from types import TracebackType
from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple, Type, Union

from ._sievedb import Error

__all__ = [
    "Client",
    "ClientError",
    "BadRequestError",
    "NotLeaderError",
    "UnavailableError",
    "OutcomeUnknownError",
    "UnreachableError",
]

Bytes = Union[bytes, bytearray, memoryview, str]
"""A key or a value: bytes, bytearray, memoryview, or str (UTF-8)."""

Op = Union[Tuple[Literal["put"], Bytes, Bytes], Tuple[Literal["delete"], Bytes]]
"""A transaction's operation: ``("put", key, value)`` or ``("delete", key)``."""

Compare = Tuple[Bytes, Optional[Bytes]]
"""A transaction's compare: ``(key, value)``, or ``(key, None)``: absent."""


class ClientError(Error):
    """The base class of the client's errors (a :class:`sievedb.Error`).

    ``status`` is the HTTP status of the answer (None if there was none) and
    ``message`` the server's ``{"error": ...}`` text or the client's own."""

    status: Optional[int]
    message: str

    def __init__(self, message: str, *, status: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class BadRequestError(ClientError):
    """400: the server rejected the request as malformed."""


class NotLeaderError(ClientError):
    """421: the node is not the leader and does not forward (``--no-forward``).

    ``leader_id`` and ``leader_addr`` (``"host:port"``) name the leader, or
    are None while the node knows of none."""

    leader_id: Optional[int]
    leader_addr: Optional[str]

    def __init__(
        self,
        message: str,
        *,
        leader_id: Optional[int],
        leader_addr: Optional[str],
        status: Optional[int] = 421,
    ) -> None:
        super().__init__(message, status=status)
        self.leader_id = leader_id
        self.leader_addr = leader_addr


class UnavailableError(ClientError):
    """503, or no answer in time: no quorum, no leader, or a node going down."""


class OutcomeUnknownError(UnavailableError):
    """A write that may or may not have been applied (and may still be)."""


class UnreachableError(ClientError):
    """No connection to the server could be made; nothing was sent."""


_WRITE = True
_READ = False


def _bytes(what: str, x: object) -> bytes:
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8")
    if isinstance(x, (bytearray, memoryview)):
        return bytes(x)
    raise TypeError(f"{what} must be bytes, bytearray, memoryview or str, not {type(x).__name__}")


def _quote(b: bytes) -> str:
    # Every byte but the unreserved ones is percent-encoded: '/', '%', '?',
    # '+', NUL and non-ASCII bytes included.
    return urllib.parse.quote_from_bytes(b, safe="")


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


def _unb64(s: object) -> bytes:
    if not isinstance(s, str):
        raise ClientError(f"unexpected answer: {s!r} is not a base64 string")
    return base64.b64decode(s, validate=True)


def _normalize_addr(addr: str) -> str:
    a = addr.strip()
    if a.startswith("http://"):
        a = a[len("http://") :]
    a = a.rstrip("/")
    if not a or "/" in a:
        raise ValueError(f"addr must be HOST:PORT, not {addr!r}")
    return a


def _error_text(status: int, body: bytes) -> str:
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("error"), str):
        return str(doc["error"])
    text = body.decode("utf-8", "replace").strip()
    return text or f"HTTP {status}"


def _is_stale(conn: http.client.HTTPConnection) -> bool:
    """Whether a kept connection was closed by the server meanwhile (it is
    readable between requests only at EOF or with data nobody asked for)."""
    sock = conn.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class Client:
    """A client of one sievedb-server node at ``addr`` (``"host:port"``).

    ``timeout`` (seconds) bounds connecting and each wait for the server
    (keep it above the server's ``--request-timeout-ms`` to receive its 503
    answers rather than time out first); ``stale=True`` makes reads stale by
    default; ``follow_leader=True`` sends a request answered 421 once more
    to the leader it names. See the module's documentation for the errors
    and for threads."""

    def __init__(
        self,
        addr: str = "127.0.0.1:7001",
        *,
        timeout: Optional[float] = 5.0,
        stale: bool = False,
        follow_leader: bool = False,
    ) -> None:
        self.addr = _normalize_addr(addr)
        self.timeout = timeout
        self.stale = stale
        self.follow_leader = follow_leader
        self._local = threading.local()
        self._lock = threading.Lock()
        # Every thread's live connections, for close().
        self._conns: weakref.WeakSet[http.client.HTTPConnection] = weakref.WeakSet()
        self._closed = False

    def __repr__(self) -> str:
        return f"sievedb.Client({self.addr!r})"

    # -- connections ------------------------------------------------------

    def _thread_conns(self) -> Dict[str, http.client.HTTPConnection]:
        conns: Optional[Dict[str, http.client.HTTPConnection]] = getattr(self._local, "conns", None)
        if conns is None:
            conns = {}
            self._local.conns = conns
        return conns

    def _connect(self, addr: str) -> http.client.HTTPConnection:
        conn = http.client.HTTPConnection(addr, timeout=self.timeout)
        try:
            conn.connect()
        except OSError as e:
            conn.close()
            raise UnreachableError(f"cannot connect to {addr}: {e}") from e
        with self._lock:
            if self._closed:
                conn.close()
                raise ClientError("the client is closed")
            self._conns.add(conn)
        self._thread_conns()[addr] = conn
        return conn

    def _drop(self, addr: str) -> None:
        conn = self._thread_conns().pop(addr, None)
        if conn is not None:
            conn.close()
            with self._lock:
                self._conns.discard(conn)

    def close(self) -> None:
        """Closes every connection of every thread; later calls raise
        ClientError. Closing twice is fine."""
        with self._lock:
            self._closed = True
            conns = list(self._conns)
            self._conns.clear()
        for c in conns:
            c.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    # -- one request ------------------------------------------------------

    def _send(
        self, addr: str, method: str, path: str, body: Optional[bytes], write: bool
    ) -> Tuple[int, bytes]:
        if self._closed:
            raise ClientError("the client is closed")
        headers = {"Accept": "application/json, application/octet-stream"}
        if body is not None:
            headers["Content-Type"] = (
                "application/json" if method == "POST" else "application/octet-stream"
            )
        for attempt in range(2):
            conn = self._thread_conns().get(addr)
            reused = conn is not None
            if conn is not None and _is_stale(conn):
                self._drop(addr)
                conn, reused = None, False
            if conn is None:
                conn = self._connect(addr)
            try:
                conn.request(method, path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException) as e:
                self._drop(addr)
                if self._closed:
                    raise ClientError("the client is closed") from e
                timed_out = isinstance(e, (TimeoutError, socket.timeout))
                if write:
                    raise OutcomeUnknownError(
                        f"{method} {path} to {addr}: {str(e) or type(e).__name__} "
                        "after the request was sent (outcome unknown)"
                    ) from e
                if reused and not timed_out and attempt == 0:
                    continue  # a read on a connection the server had closed: again
                raise UnavailableError(
                    f"{method} {path} to {addr}: {str(e) or type(e).__name__}"
                ) from e
            if resp.will_close:
                self._drop(addr)
            return resp.status, data
        raise AssertionError("unreachable")  # pragma: no cover

    def _request(
        self,
        method: str,
        path: str,
        body: Optional[bytes] = None,
        *,
        write: bool,
        ok: Tuple[int, ...] = (200,),
    ) -> Tuple[int, bytes]:
        addr = self.addr
        status, data = self._send(addr, method, path, body, write)
        if status == 421:
            err = self._not_leader(data)
            if self.follow_leader and err.leader_addr:
                # 421: the node did nothing with it, so sending it again is safe.
                addr = _normalize_addr(err.leader_addr)
                status, data = self._send(addr, method, path, body, write)
                if status == 421:
                    raise self._not_leader(data)
            else:
                raise err
        if status in ok:
            return status, data
        text = _error_text(status, data)
        where = f"{method} {path.split('?')[0]} at {addr}"
        if status == 400:
            raise BadRequestError(f"{where}: {text}", status=status)
        if status == 503:
            if write:
                raise OutcomeUnknownError(f"{where}: {text} (a write: outcome unknown)", status=503)
            raise UnavailableError(f"{where}: {text}", status=status)
        raise ClientError(f"{where}: HTTP {status}: {text}", status=status)

    @staticmethod
    def _not_leader(data: bytes) -> NotLeaderError:
        try:
            doc = json.loads(data)
        except ValueError:
            doc = {}
        if not isinstance(doc, dict):
            doc = {}
        lid = doc.get("leader_id")
        laddr = doc.get("leader_addr")
        leader_id = lid if isinstance(lid, int) else None
        leader_addr = laddr if isinstance(laddr, str) else None
        where = f"leader {leader_id} at {leader_addr}" if leader_id is not None else "no leader known"
        return NotLeaderError(
            f"not the leader ({where})", leader_id=leader_id, leader_addr=leader_addr
        )

    def _json(self, data: bytes) -> Any:
        try:
            return json.loads(data)
        except ValueError as e:
            raise ClientError(f"unexpected answer (not JSON): {data[:200]!r}") from e

    def _consistency(self, stale: Optional[bool]) -> Optional[str]:
        return "stale" if (self.stale if stale is None else stale) else None

    # -- the key-value API ------------------------------------------------

    def get(self, key: Bytes, *, stale: Optional[bool] = None) -> Optional[bytes]:
        """The value of ``key``, or None if it is absent. Linearizable unless
        ``stale`` (default: the client's ``stale``)."""
        path = "/kv/" + _quote(_bytes("key", key))
        if self._consistency(stale):
            path += "?consistency=stale"
        status, data = self._request("GET", path, write=_READ, ok=(200, 404))
        return None if status == 404 else data

    def put(self, key: Bytes, value: Bytes) -> None:
        """Sets ``key`` to ``value``; returns once a majority committed it."""
        k, v = _bytes("key", key), _bytes("value", value)
        self._request("PUT", "/kv/" + _quote(k), v, write=_WRITE)

    def delete(self, key: Bytes) -> None:
        """Deletes ``key`` (an absent key is no error)."""
        self._request("DELETE", "/kv/" + _quote(_bytes("key", key)), write=_WRITE)

    def scan(
        self, prefix: Bytes = b"", limit: Optional[int] = None, *, stale: Optional[bool] = None
    ) -> List[Tuple[bytes, bytes]]:
        """The ``(key, value)`` pairs whose key starts with ``prefix``, in key
        order, at most ``limit`` of them (a positive int; None: all)."""
        params: List[Tuple[str, str]] = []
        p = _bytes("prefix", prefix)
        if p:
            params.append(("prefix", _quote(p)))
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int):
                raise TypeError(f"limit must be an int or None, not {type(limit).__name__}")
            params.append(("limit", str(limit)))
        c = self._consistency(stale)
        if c:
            params.append(("consistency", c))
        path = "/kv" + ("?" + "&".join(f"{k}={v}" for k, v in params) if params else "")
        _, data = self._request("GET", path, write=_READ)
        doc = self._json(data)
        kvs = doc.get("kvs") if isinstance(doc, dict) else None
        if not isinstance(kvs, list):
            raise ClientError(f"unexpected answer to a scan: {data[:200]!r}")
        return [(_unb64(kv["key"]), _unb64(kv["value"])) for kv in kvs]

    def txn(
        self,
        compare: Sequence[Compare] = (),
        success: Sequence[Op] = (),
        failure: Sequence[Op] = (),
    ) -> bool:
        """One atomic transaction: if every compare holds (``(key, value)``:
        the key has that value; ``(key, None)``: it is absent), applies the
        ``success`` operations, else the ``failure`` ones. Returns whether
        the compares held."""
        body = {
            "compare": [_compare_json(c) for c in compare],
            "success": [_op_json(o) for o in success],
            "failure": [_op_json(o) for o in failure],
        }
        _, data = self._request(
            "POST", "/txn", json.dumps(body).encode("ascii"), write=_WRITE
        )
        doc = self._json(data)
        ok = doc.get("succeeded") if isinstance(doc, dict) else None
        if not isinstance(ok, bool):
            raise ClientError(f"unexpected answer to a txn: {data[:200]!r}")
        return ok

    def compare_and_swap(self, key: Bytes, expected: Optional[Bytes], new: Optional[Bytes]) -> bool:
        """Sets ``key`` to ``new`` (deletes it if None) if its value is
        ``expected`` (absent if None), atomically; whether it did."""
        op: Op = ("delete", key) if new is None else ("put", key, new)
        return self.txn(compare=[(key, expected)], success=[op])

    def status(self) -> Dict[str, Any]:
        """The node's ``GET /cluster/status``: ``id``, ``leader_id``,
        ``term``, ``state``, ``members``, ``learners``, ``last_applied``, ..."""
        _, data = self._request("GET", "/cluster/status", write=_READ)
        doc = self._json(data)
        if not isinstance(doc, dict):
            raise ClientError(f"unexpected answer to a status: {data[:200]!r}")
        return doc

    def health(self) -> bool:
        """Whether the node serves HTTP (``GET /health``); False if it cannot
        be reached or does not answer."""
        try:
            self._request("GET", "/health", write=_READ)
        except (UnreachableError, UnavailableError):
            return False
        return True

    # -- as a dict ----------------------------------------------------------

    def __getitem__(self, key: Bytes) -> bytes:
        v = self.get(key)
        if v is None:
            raise KeyError(key)
        return v

    def __setitem__(self, key: Bytes, value: Bytes) -> None:
        self.put(key, value)

    def __delitem__(self, key: Bytes) -> None:
        # One atomic txn: delete it if present, and say whether it was.
        if self.txn(compare=[(key, None)], failure=[("delete", key)]):
            raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, (bytes, bytearray, memoryview, str)):
            return False
        return self.get(key) is not None


def _compare_json(c: Compare) -> Dict[str, Optional[str]]:
    if not isinstance(c, (tuple, list)) or len(c) != 2:
        raise ValueError(f"a compare is (key, value or None), not {c!r}")
    key, value = c
    return {
        "key": _b64(_bytes("key", key)),
        "value": None if value is None else _b64(_bytes("value", value)),
    }


def _op_json(o: Op) -> Dict[str, Dict[str, str]]:
    if isinstance(o, (tuple, list)):
        if len(o) == 3 and o[0] == "put":
            return {"put": {"key": _b64(_bytes("key", o[1])), "value": _b64(_bytes("value", o[2]))}}
        if len(o) == 2 and o[0] == "delete":
            return {"delete": {"key": _b64(_bytes("key", o[1]))}}
    raise ValueError(f'an operation is ("put", key, value) or ("delete", key), not {o!r}')

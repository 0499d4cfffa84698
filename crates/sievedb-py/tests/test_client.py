"""sievedb.Client against real sievedb-server processes on loopback: a
one-node cluster, a three-node one (nodes 2 and 3 with --no-forward) and a
three-node one that loses its quorum; plus fake servers for the failures a
real one does not give on demand (a connection lost after the request was
sent, no answer at all).

The server binary is $SIEVEDB_SERVER, else sievedb-server in
$CARGO_TARGET_DIR/{debug,release}, else in <repo>/target/{debug,release}.
Without one the server tests are skipped, except under CI=true, where they
fail: `cargo build -p sievedb-server` (or `cargo test --workspace`) first.
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

import sievedb
from sievedb import (
    BadRequestError,
    Client,
    ClientError,
    NotLeaderError,
    OutcomeUnknownError,
    UnavailableError,
    UnreachableError,
)

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "client.py"

# Every wait below ends by this many seconds at the latest.
START_TIMEOUT = 15.0
REQUEST_TIMEOUT_MS = 1000


def _find_server() -> Path | None:
    env = os.environ.get("SIEVEDB_SERVER")
    if env:
        return Path(env)
    roots = []
    if os.environ.get("CARGO_TARGET_DIR"):
        roots.append(Path(os.environ["CARGO_TARGET_DIR"]))
    roots.append(REPO / "target")
    for root in roots:
        for profile in ("debug", "release"):
            p = root / profile / "sievedb-server"
            if p.is_file() and os.access(p, os.X_OK):
                return p
    return None


@pytest.fixture(scope="session")
def server_bin() -> Path:
    p = _find_server()
    if p is None or not p.is_file():
        msg = (
            "no sievedb-server binary (set SIEVEDB_SERVER or run "
            "`cargo build -p sievedb-server`)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(msg + ": CI must not skip the client's tests")
        pytest.skip(msg)
    return p


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _http(addr: str, method: str, path: str, body: dict | None = None, timeout: float = 5.0):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://{addr}{path}", data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _wait(pred, timeout: float, what: str, logs=()):
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            if pred():
                return
        except RuntimeError:
            raise  # a node exited: no use waiting
        except Exception as e:  # noqa: BLE001 - keep waiting, report the last one
            last = e
        time.sleep(0.05)
    tails = "".join(f"\n--- {p}:\n{_tail(p)}" for p in logs)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last error: {last!r}){tails}")


def _tail(path: Path, n: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


class Node:
    def __init__(self, binary: Path, node_id: int, port: int, base: Path, extra: list[str]):
        self.binary, self.id, self.port, self.extra = binary, node_id, port, extra
        self.dir = base / f"n{node_id}"
        self.log = base / f"n{node_id}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [
                    str(self.binary),
                    "--id", str(self.id),
                    "--listen", self.addr,
                    "--db", str(self.dir),
                    "--request-timeout-ms", str(REQUEST_TIMEOUT_MS),
                    "--threads", "2",
                    *self.extra,
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )

    def healthy(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise RuntimeError(f"node {self.id} exited with {self.proc.returncode}")
        try:
            return _http(self.addr, "GET", "/health", timeout=1.0)[0] == 200
        except OSError:
            return False

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self.proc = None

    def status(self) -> dict:
        code, body = _http(self.addr, "GET", "/cluster/status", timeout=2.0)
        assert code == 200, body
        return json.loads(body)


class Cluster:
    def __init__(self, nodes: list[Node]):
        self.nodes = nodes

    def node(self, node_id: int) -> Node:
        return next(n for n in self.nodes if n.id == node_id)

    def leader(self) -> Node:
        """The node every live node agrees leads (waits for one)."""
        found: list[int] = []

        def agreed() -> bool:
            ids = {n.status()["leader_id"] for n in self.nodes if n.proc is not None}
            if len(ids) == 1 and None not in ids:
                lid = ids.pop()
                if self.node(lid).status()["state"] == "Leader":
                    found[:] = [lid]
                    return True
            return False

        _wait(agreed, START_TIMEOUT, "a leader", [n.log for n in self.nodes])
        return self.node(found[0])

    def kill(self) -> None:
        for n in self.nodes:
            n.kill()


def _start_cluster(binary: Path, base: Path, n: int, extra=lambda i: [], init_via: int = 1) -> Cluster:
    """n nodes on free ports, initialized through node `init_via`, with a
    leader; a node that could not start (its port taken meanwhile) makes it
    try again with other ports."""
    for attempt in range(3):
        ports = _free_ports(n)
        root = base / f"try{attempt}"
        root.mkdir(parents=True)
        c = Cluster([Node(binary, i + 1, ports[i], root, extra(i + 1)) for i in range(n)])
        try:
            for node in c.nodes:
                node.start()
            for node in c.nodes:
                _wait(node.healthy, START_TIMEOUT, f"node {node.id} to serve", [node.log])
        except (AssertionError, RuntimeError):
            c.kill()
            if attempt == 2:
                raise
            continue
        except BaseException:
            c.kill()
            raise
        try:
            members = {str(node.id): node.addr for node in c.nodes}
            code, body = _http(c.node(init_via).addr, "POST", "/cluster/init", {"members": members})
            assert code == 200, body
            c.leader()
        except BaseException:
            c.kill()
            raise
        return c
    raise AssertionError("unreachable")


@pytest.fixture(scope="module")
def single(server_bin, tmp_path_factory):
    c = _start_cluster(server_bin, tmp_path_factory.mktemp("single"), 1)
    try:
        yield c
    finally:
        c.kill()


@pytest.fixture(scope="module")
def trio(server_bin, tmp_path_factory):
    # Node 1 forwards, nodes 2 and 3 answer 421: whichever leads, a
    # follower with --no-forward exists. Initialized through node 2.
    c = _start_cluster(
        server_bin,
        tmp_path_factory.mktemp("trio"),
        3,
        extra=lambda i: [] if i == 1 else ["--no-forward"],
        init_via=2,
    )
    try:
        yield c
    finally:
        c.kill()


@pytest.fixture
def client(single):
    with Client(single.nodes[0].addr) as c:
        yield c


def _unique(tag: str) -> bytes:
    return f"{tag}-{random.getrandbits(48):012x}/".encode()


# -- the error classes (no server) -------------------------------------------


def test_error_hierarchy():
    assert issubclass(ClientError, sievedb.Error)
    for e in (BadRequestError, NotLeaderError, UnavailableError, UnreachableError):
        assert issubclass(e, ClientError)
    assert issubclass(OutcomeUnknownError, UnavailableError)
    assert not issubclass(UnreachableError, UnavailableError)
    for name in ("Client", "ClientError", "BadRequestError", "NotLeaderError",
                 "UnavailableError", "OutcomeUnknownError", "UnreachableError"):
        assert name in sievedb.__all__
    e = NotLeaderError("x", leader_id=3, leader_addr="h:1")
    assert (e.status, e.leader_id, e.leader_addr) == (421, 3, "h:1")


def test_bad_arguments_raise_before_sending():
    c = Client("127.0.0.1:1")  # nothing is sent for these
    with pytest.raises(TypeError):
        c.get(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        c.put(b"k", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        c.txn(success=[("frob", b"k")])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        c.txn(compare=[(b"k",)])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        c.scan(limit="3")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Client("http://h:1/kv")
    assert Client("http://127.0.0.1:7001/").addr == "127.0.0.1:7001"
    assert 42 not in c


def test_unreachable_on_a_closed_port():
    (port,) = _free_ports(1)
    c = Client(f"127.0.0.1:{port}", timeout=2.0)
    t0 = time.monotonic()
    with pytest.raises(UnreachableError):
        c.get(b"k")
    # Nothing was sent, so not an "outcome unknown" even for a write.
    with pytest.raises(UnreachableError) as ei:
        c.put(b"k", b"v")
    assert not isinstance(ei.value, UnavailableError)
    assert c.health() is False
    assert time.monotonic() - t0 < 5


class _FakeServer:
    """Accepts connections on loopback; `mode` says what it does with a
    request: "hangup" reads it and closes, "silent" reads it and never
    answers."""

    def __init__(self, mode: str):
        self.mode = mode
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.addr = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.requests = 0
        self.stop = threading.Event()
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(2.0)
            try:
                conn.recv(65536)
            except OSError:
                pass
            self.requests += 1
            if self.mode == "hangup":
                conn.close()
            else:
                self.held.append(conn)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        for c in self.held:
            c.close()
        self.sock.close()


@pytest.mark.parametrize("mode", ["hangup", "silent"])
def test_lost_after_sending_is_outcome_unknown_for_writes(mode):
    fake = _FakeServer(mode)
    try:
        c = Client(fake.addr, timeout=0.5)
        for write in (lambda: c.put(b"k", b"v"), lambda: c.delete(b"k"),
                      lambda: c.txn(success=[("put", b"k", b"v")])):
            with pytest.raises(OutcomeUnknownError):
                write()
        # A read is never "outcome unknown": plain UnavailableError.
        with pytest.raises(UnavailableError) as ei:
            c.get(b"k")
        assert not isinstance(ei.value, OutcomeUnknownError)
        assert fake.requests >= 4
    finally:
        fake.close()


# -- one node -----------------------------------------------------------------


def test_put_get_delete(client):
    k = _unique("basic") + b"k"
    assert client.get(k) is None
    assert client.put(k, b"v1") is None
    assert client.get(k) == b"v1"
    client.put(k, b"v2")
    assert client.get(k) == b"v2"
    assert client.get(k, stale=True) == b"v2"
    client.delete(k)
    assert client.get(k) is None
    client.delete(k)  # absent: no error


def test_dict_protocol(client):
    k = _unique("dict") + b"k"
    with pytest.raises(KeyError):
        client[k]
    assert k not in client
    client[k] = b"x"
    assert client[k] == b"x" and k in client
    del client[k]
    assert k not in client
    with pytest.raises(KeyError):
        del client[k]


def test_binary_keys_and_empty_values(client):
    p = _unique("bin")
    keys = [
        p + b"a/b/c",
        p + b"100%",
        p + b"%2F",
        p + b"\x00nul\x00",
        p + b"sp ace?q=1&x=#frag+plus",
        p + b"..",
        p + bytes(range(256)),
        p + "ключ".encode(),
    ]
    for i, k in enumerate(keys):
        client.put(k, b"v%d" % i)
    for i, k in enumerate(keys):
        assert client.get(k) == b"v%d" % i, k
    # str keys and values are UTF-8, like sievedb.Db; buffers are accepted.
    client.put((p + "ключ".encode()).decode(), "значение")
    assert client.get(p + "ключ".encode()) == "значение".encode()
    client.put(bytearray(p + b"ba"), memoryview(b"mv"))
    assert client.get(p + b"ba") == b"mv"
    # An empty value is a value, not an absent key.
    client.put(p + b"empty", b"")
    assert client.get(p + b"empty") == b""
    assert p + b"empty" in client
    # Binary values round-trip untouched.
    blob = bytes(range(256)) * 40
    client.put(p + b"blob", blob)
    assert client.get(p + b"blob") == blob
    got = dict(client.scan(p))
    assert got[p + b"\x00nul\x00"] == b"v3" and got[p + b"empty"] == b""
    assert len(got) == len(keys) + 3


def test_empty_key_is_a_bad_request(client):
    with pytest.raises(BadRequestError) as ei:
        client.put(b"", b"v")
    assert ei.value.status == 400 and "empty key" in ei.value.message
    with pytest.raises(BadRequestError):
        client.get(b"")


def test_scan_order_prefix_and_limit(client):
    p = _unique("scan")
    keys = [p + bytes([b]) + b"k" for b in (0, 1, 0x2F, 0x41, 0x61, 0x7F, 0x80, 0xFF)]
    shuffled = keys[:]
    random.shuffle(shuffled)
    for k in shuffled:
        client.put(k, k[::-1])
    client.put(p[:-1] + b"0", b"outside the prefix")
    assert client.scan(p) == [(k, k[::-1]) for k in keys]
    assert client.scan(p, limit=3) == [(k, k[::-1]) for k in keys[:3]]
    assert client.scan(p, limit=100) == [(k, k[::-1]) for k in keys]
    assert client.scan(p, 1, stale=True) == [(keys[0], keys[0][::-1])]
    assert client.scan(p + b"\x80") == [(keys[6], keys[6][::-1])]
    assert client.scan(p + b"none") == []
    everything = client.scan()
    assert [k for k, _ in everything] == sorted(k for k, _ in everything)
    assert len(client.scan(limit=2)) == 2
    for bad in (0, -1):
        with pytest.raises(BadRequestError):
            client.scan(p, limit=bad)


def test_txn_and_compare_and_swap(client):
    p = _unique("txn")
    a, b, c = p + b"a", p + b"b", p + b"c"
    client.put(a, b"1")
    # Every compare holds: the success ops, atomically.
    assert client.txn(
        compare=[(a, b"1"), (b, None)],
        success=[("put", b, b"2"), ("delete", a)],
        failure=[("put", c, b"failed")],
    ) is True
    assert (client.get(a), client.get(b), client.get(c)) == (None, b"2", None)
    # One does not: the failure ops.
    assert client.txn(
        compare=[(b, b"2"), (a, b"1")],
        success=[("put", c, b"succeeded")],
        failure=[("put", c, b"failed"), ("delete", b)],
    ) is False
    assert (client.get(b), client.get(c)) == (None, b"failed")
    assert client.txn() is True  # no compare: vacuously true
    # compare_and_swap: expected None = absent, new None = delete.
    assert client.compare_and_swap(a, None, b"x") is True
    assert client.compare_and_swap(a, None, b"y") is False
    assert client.compare_and_swap(a, b"wrong", b"y") is False
    assert client.compare_and_swap(a, b"x", b"y") is True
    assert client.get(a) == b"y"
    assert client.compare_and_swap(a, b"y", None) is True
    assert client.get(a) is None
    # An empty value through a txn is a value.
    assert client.compare_and_swap(p + b"e", None, b"") is True
    assert client.get(p + b"e") == b""


def test_status_and_health(single, client):
    s = client.status()
    assert s["id"] == 1 and s["leader_id"] == 1 and s["state"] == "Leader"
    assert s["members"] == {"1": single.nodes[0].addr}
    assert s["last_applied"] >= 1
    assert client.health() is True


def test_threads_share_one_client(client):
    p = _unique("threads")
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(15):
                k = p + b"%d-%d" % (t, i)
                client.put(k, k)
                assert client.get(k) == k
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors
    assert len(client.scan(p)) == 60


def test_closed_client_raises(single):
    c = Client(single.nodes[0].addr)
    c.put(b"closed-test", b"1")
    c.close()
    c.close()
    with pytest.raises(ClientError, match="closed"):
        c.get(b"closed-test")


def test_reconnects_after_the_server_restarts(single, client):
    k = _unique("restart") + b"k"
    client.put(k, b"before")
    node = single.nodes[0]
    node.kill()
    with pytest.raises(UnreachableError):
        client.get(k)
    node.start()
    _wait(node.healthy, START_TIMEOUT, "the node to restart", [node.log])
    single.leader()
    assert client.get(k) == b"before"
    client.put(k, b"after")
    assert client.get(k) == b"after"


def test_the_example_runs(single):
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), "--addr", single.nodes[0].addr],
        check=True,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    assert "compare_and_swap" in out


# -- three nodes --------------------------------------------------------------


def test_cluster_writes_through_any_node_and_stale_reads_on_followers(trio):
    leader = trio.leader()
    followers = [n for n in trio.nodes if n is not leader]
    p = _unique("trio")
    # Through the leader, and through node 1 (which forwards if it follows).
    with Client(leader.addr) as c:
        c.put(p + b"a", b"1")
    with Client(trio.node(1).addr) as c:
        c.put(p + b"b", b"2")
        assert c.get(p + b"a") == b"1"
        assert c.status()["members"] == {str(n.id): n.addr for n in trio.nodes}
    for f in followers:
        # Stale reads are served by the follower itself, --no-forward or not.
        with Client(f.addr, stale=True) as c:
            _wait(lambda: c.get(p + b"b") == b"2", 5, f"node {f.id} to apply")
            assert c.get(p + b"a") == b"1"
            assert c.scan(p) == [(p + b"a", b"1"), (p + b"b", b"2")]
            assert c.get(p + b"zzz") is None
            assert c.status()["leader_id"] == leader.id


def test_not_leader_and_follow_leader(trio):
    leader = trio.leader()
    follower = next(n for n in trio.nodes if n is not leader and "--no-forward" in n.extra)
    k = _unique("421") + b"k"
    with Client(follower.addr) as c:
        for call in (lambda: c.put(k, b"v"), lambda: c.get(k), lambda: c.delete(k),
                     lambda: c.scan(k), lambda: c.txn(success=[("put", k, b"v")])):
            with pytest.raises(NotLeaderError) as ei:
                call()
            assert ei.value.status == 421
            assert (ei.value.leader_id, ei.value.leader_addr) == (leader.id, leader.addr)
        assert c.get(k, stale=True) is None  # served locally
    with Client(follower.addr, follow_leader=True) as c:
        c.put(k, b"followed")
        assert c.get(k) == b"followed"
        assert c.compare_and_swap(k, b"followed", b"swapped") is True
        assert c[k] == b"swapped"


def test_lost_quorum_is_unavailable(server_bin, tmp_path):
    c3 = _start_cluster(server_bin, tmp_path, 3)
    try:
        leader = c3.leader()
        with Client(leader.addr, timeout=5.0) as c:
            c.put(b"q", b"1")
            for n in c3.nodes:
                if n is not leader:
                    n.kill()
            t0 = time.monotonic()
            with pytest.raises(OutcomeUnknownError) as ei:
                c.put(b"q", b"2")  # a write's 503: it may yet commit
            assert ei.value.status == 503
            with pytest.raises(UnavailableError) as ei2:
                c.get(b"q")  # linearizable: needs a quorum
            assert ei2.value.status == 503
            assert not isinstance(ei2.value, OutcomeUnknownError)
            # Answered within the server's request timeout, not hung.
            assert time.monotonic() - t0 < 2 * (REQUEST_TIMEOUT_MS / 1000) + 3
            # The node's own copy is still there to read.
            assert c.get(b"q", stale=True) in (b"1", b"2")
    finally:
        c3.kill()

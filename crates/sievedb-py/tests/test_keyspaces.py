"""Keyspaces: isolation, the mapping surface of a Keyspace, batches across
keyspaces, snapshot reads, per-keyspace options (merge, TTL), drop, reopen,
and close with live Keyspace objects."""

import gc
import threading
import time

import pytest

import sievedb


def u64(n):
    return n.to_bytes(8, "little")


def sst_files(path):
    return sorted(p.name for p in path.iterdir() if p.suffix == ".sst")


def test_keyspaces_are_isolated(db):
    users = db.keyspace("users")
    orders = db.keyspace("orders")
    db[b"k"] = b"default"
    users[b"k"] = b"users"
    orders.put(b"k", b"orders")
    assert (db[b"k"], users[b"k"], orders[b"k"]) == (b"default", b"users", b"orders")
    users.put(b"only-users", b"1")
    assert b"only-users" in users
    assert b"only-users" not in db and b"only-users" not in orders
    assert orders.get(b"only-users") is None
    assert orders.get(b"only-users", b"dflt") == b"dflt"
    del orders[b"k"]
    assert b"k" not in orders and users[b"k"] == b"users" and db[b"k"] == b"default"
    assert list(users) == [b"k", b"only-users"]
    assert list(db) == [b"k"]
    assert db.list_keyspaces() == ["default", "orders", "users"]
    assert users.name == "users"
    assert repr(users) == 'sievedb.Keyspace("users")'
    # The same keyspace through a second handle, and the default one as a Keyspace.
    assert db.keyspace("users")[b"k"] == b"users"
    default = db.default_keyspace()
    assert default.name == "default" and default[b"k"] == b"default"
    default[b"d2"] = b"x"
    assert db[b"d2"] == b"x"
    assert db.keyspace("default")[b"d2"] == b"x"


def test_keyspace_mapping_surface(db):
    ks = db.keyspace("ks")
    for i in range(20):
        ks.put(b"key%02d" % i, b"v%02d" % i)
    ks["str-key"] = "välue"
    assert ks[b"str-key"] == "välue".encode()
    assert [k for k, _ in ks.items(b"key05", b"key08")] == [b"key05", b"key06", b"key07"]
    assert list(ks.keys(b"key17", b"key99", reverse=True)) == [b"key19", b"key18", b"key17"]
    assert list(ks.values(end=b"key02")) == [b"v00", b"v01"]
    assert [k for k, _ in ks.prefix(b"key1", reverse=True)][:2] == [b"key19", b"key18"]
    assert ks.multi_get([b"key00", b"nope", b"key19"]) == [b"v00", None, b"v19"]
    ks.delete_range(b"key10", b"key20")
    assert len(list(ks.keys(b"key", b"kez"))) == 10
    ks.delete_range(b"key00", b"key05", sync=True)
    assert list(ks.keys(b"key", b"kez"))[0] == b"key05"
    ks.delete(b"key05", sync=True)
    assert b"key05" not in ks
    with pytest.raises(KeyError):
        ks[b"key05"]
    with pytest.raises(KeyError):
        del ks[b"key05"]
    with pytest.raises(TypeError):
        ks.put(1, b"v")
    db.flush()
    ks.compact_range()
    stats = ks.stats()
    assert sum(level["files"] for level in stats["levels"]) >= 1
    assert list(ks.keys(b"key", b"kez")) == [b"key%02d" % i for i in range(6, 10)]
    assert db.list_keyspaces() == ["default", "ks"]


def test_a_batch_is_atomic_across_keyspaces(tmp_path):
    with sievedb.Db(tmp_path / "one") as db, sievedb.Db(tmp_path / "two") as other:
        users = db.keyspace("users")
        index = db.keyspace("by_email")
        users[b"old"] = b"x"
        index[b"anna@example.com"] = b"u0"
        index[b"zed@example.com"] = b"u9"
        b = sievedb.WriteBatch()
        b.put(b"u1", b"alice", keyspace=users)
        b.delete(b"old", keyspace=users)
        b.delete_range(b"a", b"b", keyspace=index)
        b.put(b"bob@example.com", b"u1", keyspace=index)
        b.put(b"meta", b"1")  # the default keyspace
        assert len(b) == 5
        db.write(b, sync=True)
        assert users[b"u1"] == b"alice" and b"old" not in users
        assert list(index) == [b"bob@example.com", b"zed@example.com"]
        assert db[b"meta"] == b"1" and b"u1" not in db

        # A batch naming another database's keyspace is refused whole.
        theirs = other.keyspace("theirs")
        b = sievedb.WriteBatch()
        b.put(b"u2", b"bob", keyspace=users)
        b.put(b"k", b"v", keyspace=theirs)
        with pytest.raises(sievedb.InvalidArgumentError):
            db.write(b)
        assert b"u2" not in users and b"k" not in theirs


def test_snapshot_reads_every_keyspace_at_one_point(db):
    a, b = db.keyspace("a"), db.keyspace("b")
    for i in range(10):
        a.put(b"k%d" % i, b"a%d" % i)
        b.put(b"k%d" % i, b"b%d" % i)
    db[b"k0"] = b"default"
    with db.snapshot() as snap:
        batch = sievedb.WriteBatch()
        batch.delete(b"k0", keyspace=a)
        batch.put(b"k1", b"new", keyspace=b)
        batch.put(b"k99", b"new", keyspace=b)
        batch.put(b"k0", b"changed")
        db.write(batch)
        db.flush()  # the snapshot's data moves to table files
        assert a.get(b"k0") is None and b[b"k1"] == b"new"
        assert snap.get(b"k0", keyspace=a) == b"a0"
        assert snap.get(b"k1", keyspace=b) == b"b1"
        assert snap.get(b"k99", b"absent", keyspace=b) == b"absent"
        assert snap.get(b"k0") == b"default" and snap[b"k0"] == b"default"
        assert list(snap.keys(keyspace=b)) == [b"k%d" % i for i in range(10)]
        assert list(snap.values(b"k2", b"k4", keyspace=a)) == [b"a2", b"a3"]
        assert [k for k, _ in snap.items(b"k7", reverse=True, keyspace=a)] == [b"k9", b"k8", b"k7"]
        assert [v for _, v in snap.prefix(b"k1", keyspace=b)] == [b"b1"]
        assert list(snap.prefix(b"k", keyspace=b))[-1] == (b"k9", b"b9")
        assert list(snap.keys()) == [b"k0"]
    with pytest.raises(sievedb.ClosedError):
        snap.get(b"k0", keyspace=a)


def test_snapshot_prefix_with_0xff_bytes(db):
    ks = db.keyspace("bin")
    for k in [b"\xfe\xff", b"\xff", b"\xff\x00", b"\xff\xff\x01", b"a"]:
        ks[k] = k
    snap = db.snapshot()
    assert [k for k, _ in snap.prefix(b"\xff", keyspace=ks)] == [b"\xff", b"\xff\x00", b"\xff\xff\x01"]
    assert [k for k, _ in snap.prefix(b"\xff\xff", keyspace=ks)] == [b"\xff\xff\x01"]
    assert [k for k, _ in snap.prefix(b"", keyspace=ks)] == sorted(
        [b"\xfe\xff", b"\xff", b"\xff\x00", b"\xff\xff\x01", b"a"]
    )
    assert [k for k, _ in snap.prefix(b"\xff", keyspace=ks)] == [k for k, _ in ks.prefix(b"\xff")]
    snap.release()


def test_drop_keyspace(tmp_path):
    path = tmp_path / "db"
    with sievedb.Db(path, write_buffer_size=64 << 10) as db:
        gone = db.keyspace("gone")
        kept = db.keyspace("kept")
        for i in range(2000):
            gone.put(b"k%05d" % i, b"g" * 64)
            kept.put(b"k%05d" % i, b"k" * 64)
        db.flush()
        files_before = sst_files(path)
        it = iter(gone.keys())
        again_handle = db.keyspace("gone")
        db.drop_keyspace("gone")
        assert db.list_keyspaces() == ["default", "kept"]
        # Every Python handle of it refuses reads and writes...
        for handle in (gone, again_handle):
            with pytest.raises(sievedb.InvalidArgumentError, match="dropped"):
                handle.get(b"k00001")
            with pytest.raises(sievedb.InvalidArgumentError, match="dropped"):
                handle[b"x"] = b"y"
            with pytest.raises(sievedb.InvalidArgumentError, match="dropped"):
                list(handle.items())
            with pytest.raises(sievedb.InvalidArgumentError, match="dropped"):
                sievedb.WriteBatch().put(b"x", b"y", keyspace=handle)
        assert "dropped" in repr(gone)
        # ...while an iterator opened before goes on reading.
        assert sum(1 for _ in it) == 2000
        # The handles were let go of: the files go without a garbage collection.
        del it
        db.wait_for_compactions()
        assert len(sst_files(path)) < len(files_before)
        with pytest.raises(sievedb.InvalidArgumentError):
            db.drop_keyspace("gone")
        with pytest.raises(sievedb.InvalidArgumentError):
            db.drop_keyspace("default")
        # Made again under the same name, it is a new, empty keyspace.
        fresh = db.keyspace("gone")
        assert fresh.get(b"k00001") is None
        fresh[b"new"] = b"1"
        assert gone.name == "gone"
        with pytest.raises(sievedb.InvalidArgumentError):
            gone.get(b"new")  # an old handle stays dropped
    with sievedb.Db(path) as db:
        assert db.list_keyspaces() == ["default", "gone", "kept"]
        assert list(db.keyspace("gone")) == [b"new"]
        assert sum(1 for _ in db.keyspace("kept").keys()) == 2000


def test_data_and_list_survive_reopen(tmp_path):
    path = tmp_path / "db"
    with sievedb.Db(path) as db:
        a = db.keyspace("a")
        a[b"flushed"] = b"1"
        db.flush()
        a[b"in-wal"] = b"2"
        db.keyspace("empty")
        b = sievedb.WriteBatch()
        b.put(b"x", b"y", keyspace=db.keyspace("b"))
        db.write(b)
    with sievedb.Db(path) as db:
        assert db.list_keyspaces() == ["a", "b", "default", "empty"]
        a = db.keyspace("a")
        assert dict(a.items()) == {b"flushed": b"1", b"in-wal": b"2"}
        assert db.keyspace("b")[b"x"] == b"y"
        assert list(db.keyspace("empty")) == []
        assert list(db) == []
    # A read-only open sees every keyspace and creates none.
    db = sievedb.Db.open_read_only(path)
    try:
        assert db.list_keyspaces() == ["a", "b", "default", "empty"]
        assert db.keyspace("a")[b"in-wal"] == b"2"
        with pytest.raises(sievedb.Error):
            db.keyspace("new")
        with pytest.raises(sievedb.Error):
            db.keyspace("a")[b"k"] = b"v"
    finally:
        db.close()


def test_merge_keyspace_with_u64add(tmp_path):
    path = tmp_path / "db"
    with sievedb.Db(path) as db:
        counters = db.keyspace("counters", merge_operator="u64add")
        for _ in range(5):
            counters.merge(b"hits", u64(2))
        b = sievedb.WriteBatch()
        b.merge(b"hits", u64(1), keyspace=counters)
        b.merge(b"misses", u64(7), keyspace=counters)
        db.write(b)
        assert counters[b"hits"] == u64(11)
        assert counters.multi_get([b"hits", b"misses"]) == [u64(11), u64(7)]
        # The default keyspace has no merge operator: a merge is refused.
        with pytest.raises(sievedb.InvalidArgumentError, match="merge_operator="):
            db.merge(b"x", u64(1))
        assert db.get(b"x") is None
        # Options are set once per process; a plain handle gets them.
        with pytest.raises(sievedb.InvalidArgumentError):
            db.keyspace("counters", merge_operator="u64add")
        db.keyspace("counters").merge(b"hits", u64(1))
        assert counters[b"hits"] == u64(12)
        log = db.keyspace("log", merge_operator="append", merge_separator=b"|")
        log.merge(b"k", b"a")
        log.merge(b"k", b"b")
        assert log[b"k"] == b"a|b"
    with sievedb.Db(path) as db:
        counters = db.keyspace("counters", merge_operator="u64add")
        counters.merge(b"hits", u64(1))
        assert counters[b"hits"] == u64(13)


def test_keyspace_options_are_checked(db):
    assert "merge_operator" in sievedb.KEYSPACE_OPTIONS and "ttl" in sievedb.KEYSPACE_OPTIONS
    with pytest.raises(ValueError, match="nonsense"):
        db.keyspace("a", nonsense=1)
    with pytest.raises(ValueError, match="block_cache_capacity.*database"):
        db.keyspace("a", block_cache_capacity=1 << 20)
    with pytest.raises(ValueError, match="size_ratio"):
        db.keyspace("a", size_ratio="ten")
    with pytest.raises(ValueError, match="merge_operator"):
        db.keyspace("a", merge_operator="sum")
    with pytest.raises(sievedb.InvalidArgumentError):
        db.keyspace("a", size_ratio=1)  # the engine refuses it
    with pytest.raises(sievedb.InvalidArgumentError):
        db.keyspace("a", ttl=60, merge_operator="u64add")
    with pytest.raises(sievedb.InvalidArgumentError):
        db.keyspace("default", bits_per_key=5.0)
    with pytest.raises(sievedb.InvalidArgumentError):
        db.keyspace("")
    with pytest.raises(sievedb.InvalidArgumentError):
        db.keyspace("x" * 256)
    assert db.list_keyspaces() == ["default"], "a refused open creates nothing"
    ks = db.keyspace(
        "tuned",
        compaction_style="tiering",
        bits_per_key=4.0,
        compression="none",
        write_buffer_size=1 << 20,
        block_size=8 << 10,
    )
    for i in range(100):
        ks[b"%03d" % i] = b"v"
    assert sum(1 for _ in ks) == 100


def test_ttl_keyspace(tmp_path):
    path = tmp_path / "db"
    with sievedb.Db(path) as db:
        sessions = db.keyspace("sessions", ttl=1)
        sessions[b"tok"] = b"alice"
        db[b"kept"] = b"forever"
        assert sessions[b"tok"] == b"alice"
        with pytest.raises(sievedb.InvalidArgumentError):
            sessions.merge(b"m", b"1")  # as on a TTL database
        deadline = time.monotonic() + 5
        while sessions.get(b"tok") is not None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sessions.get(b"tok") is None, "expired"
        assert list(sessions.items()) == []
        assert db[b"kept"] == b"forever"
    with sievedb.Db(path) as db:
        # A TTL keyspace must be reopened with a TTL.
        with pytest.raises(sievedb.InvalidArgumentError, match="(?i)ttl"):
            db.keyspace("sessions")
        sessions = db.keyspace("sessions", ttl=3600)
        sessions[b"tok2"] = b"bob"
        assert sessions[b"tok2"] == b"bob"


def test_close_releases_live_keyspace_objects(tmp_path):
    path = tmp_path / "db"
    db = sievedb.Db(path)
    users = db.keyspace("users")
    users[b"k"] = b"v"
    other = db.keyspace("other", merge_operator="u64add")
    it = iter(users.items())
    default = db.default_keyspace()
    db.close()  # no BusyError: the keyspace handles are released first
    for ks in (users, other, default):
        with pytest.raises(sievedb.ClosedError):
            ks.get(b"k")
        with pytest.raises(sievedb.ClosedError):
            ks[b"k"] = b"v"
        with pytest.raises(sievedb.ClosedError):
            ks.keys()
        with pytest.raises(sievedb.ClosedError):
            sievedb.WriteBatch().put(b"k", b"v", keyspace=ks)
        assert "closed" in repr(ks)
    with pytest.raises(sievedb.ClosedError):
        next(it)
    with pytest.raises(sievedb.ClosedError):
        db.keyspace("users")
    with pytest.raises(sievedb.ClosedError):
        db.list_keyspaces()
    # The directory is unlocked: every engine handle is gone.
    with sievedb.Db(path) as db2:
        assert db2.keyspace("users")[b"k"] == b"v"
        with pytest.raises(sievedb.ClosedError):
            users.get(b"k")  # an old object stays closed
    # In a with block, and with objects dropped before the close.
    with sievedb.Db(path) as db3:
        ks = db3.keyspace("users")
        assert ks[b"k"] == b"v"
        del ks
        gc.collect()
        kept = db3.keyspace("other")
    with pytest.raises(sievedb.ClosedError):
        kept.get(b"x")


def test_keyspace_outlives_a_garbage_collected_db(tmp_path):
    ks = sievedb.Db(tmp_path / "db").keyspace("ks")  # the Db object is kept by ks
    ks[b"k"] = b"v"
    assert ks[b"k"] == b"v"
    del ks
    gc.collect()
    with sievedb.Db(tmp_path / "db") as db:
        assert db.keyspace("ks")[b"k"] == b"v"


def test_keyspaces_from_threads(tmp_path):
    with sievedb.Db(tmp_path / "db", write_buffer_size=256 << 10) as db:
        spaces = [db.keyspace("t%d" % t) for t in range(4)]
        errors = []

        def worker(t):
            try:
                ks = spaces[t]
                for i in range(1000):
                    k = b"%05d" % i
                    ks.put(k, b"%d" % t)
                    assert ks.get(k) == b"%d" % t
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert errors == []
        for t, ks in enumerate(spaces):
            assert set(ks.values()) == {b"%d" % t}
            assert sum(1 for _ in ks) == 1000


def test_close_while_threads_use_keyspaces(tmp_path):
    # Threads write through Keyspace objects until close() stops them: each
    # ends on ClosedError, close() neither deadlocks nor raises BusyError.
    db = sievedb.Db(tmp_path / "db")
    spaces = [db.keyspace("t%d" % t) for t in range(3)]
    started = threading.Barrier(len(spaces) + 1)
    ends = []

    def worker(ks):
        started.wait()
        i = 0
        try:
            while True:
                ks.put(b"%08d" % i, b"v")
                i += 1
                if i % 100 == 0:
                    sum(1 for _ in ks.keys(reverse=True))
        except sievedb.ClosedError:
            ends.append("closed")
        except Exception as e:  # noqa: BLE001 - reported below
            ends.append(e)

    threads = [threading.Thread(target=worker, args=(ks,)) for ks in spaces]
    for th in threads:
        th.start()
    started.wait()
    time.sleep(0.2)
    db.close()
    for th in threads:
        th.join(timeout=30)
        assert not th.is_alive()
    assert ends == ["closed"] * len(spaces)
    with sievedb.Db(tmp_path / "db") as db:
        assert all(sum(1 for _ in db.keyspace("t%d" % t)) > 0 for t in range(3))

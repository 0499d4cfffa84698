"""The Db surface: reads and writes, the dict protocol, iteration, batches,
snapshots, maintenance calls, a reopen."""

import pathlib

import pytest

import sievedb


def test_put_get_delete(db):
    db.put(b"k", b"v")
    assert db.get(b"k") == b"v"
    assert db.get(b"absent") is None
    assert db.get(b"absent", b"dflt") == b"dflt"
    db.delete(b"k")
    assert db.get(b"k") is None
    db.delete(b"never-there")  # deleting an absent key is fine


def test_str_is_utf8_and_bytearray_accepted(db):
    db["clé"] = "välue"
    assert db.get("clé".encode()) == "välue".encode()
    db.put(bytearray(b"ba"), bytearray(b"x"))
    assert db[b"ba"] == b"x"


def test_bad_key_types_raise_type_error(db):
    with pytest.raises(TypeError):
        db.put(1, b"v")
    with pytest.raises(TypeError):
        db.get(None)
    with pytest.raises(TypeError):
        db[b"k"] = 3.5


def test_dict_protocol(db):
    db[b"a"] = b"1"
    assert db[b"a"] == b"1"
    assert b"a" in db and b"b" not in db
    with pytest.raises(KeyError):
        db[b"b"]
    del db[b"a"]
    assert b"a" not in db
    with pytest.raises(KeyError):
        del db[b"a"]
    for k in [b"x", b"y", b"z"]:
        db[k] = k.upper()
    assert list(db) == [b"x", b"y", b"z"]


def fill(db, n=100):
    for i in range(n):
        db.put(b"key%03d" % i, b"value%03d" % i)


def test_items_both_directions_with_bounds(db):
    fill(db)
    db.flush()  # half on disk, half in the memtable
    for i in range(100, 150):
        db.put(b"key%03d" % i, b"value%03d" % i)
    every = [(b"key%03d" % i, b"value%03d" % i) for i in range(150)]
    assert list(db.items()) == every
    assert list(db.items(reverse=True)) == every[::-1]
    assert list(db.items(start=b"key010", end=b"key020")) == every[10:20]
    assert list(db.items(start=b"key010", end=b"key020", reverse=True)) == every[10:20][::-1]
    assert list(db.items(start=b"key140")) == every[140:]
    assert list(db.items(end=b"key003")) == every[:3]
    assert list(db.keys(b"key005", b"key007")) == [b"key005", b"key006"]
    assert list(db.values(b"key005", b"key007", reverse=True)) == [b"value006", b"value005"]
    assert list(db.items(b"zzz")) == []


def test_prefix(db):
    for k in [b"user:1", b"user:2", b"usher", b"user:3", b"v"]:
        db[k] = b"."
    assert [k for k, _ in db.prefix(b"user:")] == [b"user:1", b"user:2", b"user:3"]
    assert [k for k, _ in db.prefix(b"user:", reverse=True)] == [b"user:3", b"user:2", b"user:1"]
    assert list(db.prefix(b"nope")) == []


def test_iterator_sees_the_view_it_was_created_on(db):
    fill(db, 10)
    it = iter(db.keys())  # an iterator is a consistent view; db.keys() is live
    db.put(b"key005x", b"new")
    db.delete(b"key000")
    assert list(it) == [b"key%03d" % i for i in range(10)]
    it2 = iter(db.items())
    next(it2)
    it2.close()
    assert list(it2) == []


def test_delete_range_and_multi_get(db):
    fill(db, 20)
    db.delete_range(b"key005", b"key015")
    assert db.get(b"key004") == b"value004"
    assert db.get(b"key005") is None and db.get(b"key014") is None
    assert db.get(b"key015") == b"value015"
    assert db.multi_get([b"key001", b"key010", b"key019", "nope"]) == [
        b"value001",
        None,
        b"value019",
        None,
    ]


def test_write_batch_is_atomic_and_reusable(db):
    db[b"gone"] = b"x"
    b = sievedb.WriteBatch()
    b.put(b"a", b"1")
    b.put("b", "2")
    b.delete(b"gone")
    b.delete_range(b"r0", b"r9")
    assert len(b) == 4 and b.size_in_bytes() > 0
    db[b"r5"] = b"x"
    db.write(b)
    assert (db[b"a"], db[b"b"], b"gone" in db, b"r5" in db) == (b"1", b"2", False, False)
    b.clear()
    assert len(b) == 0
    db.write(b)  # an empty batch writes nothing


def test_snapshot_isolation_and_release(db):
    db[b"k"] = b"old"
    with db.snapshot() as snap:
        db[b"k"] = b"new"
        db[b"added"] = b"x"
        assert snap.get(b"k") == b"old"
        assert snap[b"k"] == b"old"
        assert b"added" not in snap
        assert snap.get(b"added", 7) == 7
        assert list(snap.items()) == [(b"k", b"old")]
        assert list(snap.keys(reverse=True)) == [b"k"]
        assert list(snap.values()) == [b"old"]
        assert list(snap.prefix(b"k")) == [(b"k", b"old")]
        assert snap.sequence > 0
    with pytest.raises(sievedb.ClosedError):
        snap.get(b"k")
    assert db[b"k"] == b"new"


def test_stats_property_and_sizes(db):
    fill(db, 1000)
    db.flush()
    db.get(b"key001")
    s = db.stats()
    assert s["puts"] == 1000 and s["gets"] >= 1
    assert isinstance(s["levels"], list) and sum(l["files"] for l in s["levels"]) >= 1
    assert "Gets:" in db.property("sievedb.stats")
    assert db.property("no.such.property") is None
    assert db.property_int("sievedb.num-files-at-level0") is not None
    assert db.approximate_size(b"key000", b"key999") > 0
    db.compact_range()
    db.wait_for_compactions()
    assert db.get(b"key999") == b"value999"


def test_checkpoint_opens_as_a_copy(db, tmp_path):
    fill(db, 50)
    db.checkpoint(tmp_path / "cp")
    db.put(b"after", b"x")
    with sievedb.Db(tmp_path / "cp") as cp:
        assert cp.get(b"key049") == b"value049"
        assert cp.get(b"after") is None


def test_reopen_keeps_everything(tmp_path):
    path = tmp_path / "db"
    with sievedb.Db(path, write_buffer_size=64 << 10) as db:
        fill(db, 2000)
        db.delete(b"key000")
        assert isinstance(db.path, pathlib.Path)
    with sievedb.Db(str(path)) as db:
        assert db.get(b"key000") is None
        assert db.get(b"key1999") == b"value1999"
        assert sum(1 for _ in db.keys()) == 1999


def test_filter_options_and_budget(tmp_path):
    opts = dict(
        bits_per_key=12.0,
        layout="units",
        units=6,
        filter_memory_bits_per_key=4.0,
        filter_policy="elastic",
        write_buffer_size=64 << 10,
        target_file_size=64 << 10,
    )
    with sievedb.Db(tmp_path / "db", **opts) as db:
        fill(db, 3000)
        db.flush()
        db.wait_for_compactions()
        for i in range(3000):
            db.get(b"key%03d" % (i % 1000))
        s = db.stats()
        assert s["filter_memory_budget_bytes"] > 0
        assert s["filter_memory_bytes"] <= s["filter_memory_budget_bytes"]
    assert "elastic" in sievedb.FILTER_POLICIES
    assert "bits_per_key" in sievedb.OPTIONS


def test_close_and_context_manager(tmp_path):
    db = sievedb.Db(tmp_path / "db")
    db.put(b"k", b"v")
    db.close()
    assert db.closed
    db.close()  # twice is fine
    with pytest.raises(sievedb.ClosedError):
        db.get(b"k")
    with pytest.raises(sievedb.Error):
        db[b"k"] = b"v"
    assert "closed" in repr(db)
    with sievedb.Db(tmp_path / "db") as db2:
        assert db2[b"k"] == b"v"
    assert db2.closed


def test_close_releases_live_snapshots_and_iterators(tmp_path):
    db = sievedb.Db(tmp_path / "db")
    fill(db, 3000)
    snap = db.snapshot()
    it = iter(db.items())
    next(it)
    snap_it = iter(snap.keys())
    next(snap_it)
    db.close()  # no BusyError: the children are released first
    with pytest.raises(sievedb.ClosedError):
        snap.get(b"key001")
    with pytest.raises(sievedb.ClosedError):
        next(it)
    with pytest.raises(sievedb.ClosedError):
        next(snap_it)
    with sievedb.Db(tmp_path / "db") as again:  # the lock is free at once
        assert again[b"key001"] == b"value001"


def test_with_block_ends_cleanly_with_a_half_read_iterator(tmp_path):
    with sievedb.Db(tmp_path / "db") as db:
        fill(db, 100)
        it = iter(db.keys())
        assert next(it) == b"key000"
    assert db.closed

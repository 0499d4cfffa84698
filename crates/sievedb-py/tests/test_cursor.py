"""The seekable cursor (rocksdict's RdictIter): db.iter(), ks.iter(),
snap.iter()."""

import threading

import pytest

import sievedb


def fill(t, keys=(b"a", b"c", b"e", b"g")):
    for k in keys:
        t[k] = k.upper()


def walk(it):
    out = []
    while it.valid():
        out.append(it.key())
        it.next()
    return out


def walk_back(it):
    out = []
    while it.valid():
        out.append(it.key())
        it.prev()
    return out


def test_starts_invalid_and_seeks(db):
    fill(db)
    it = db.iter()
    assert isinstance(it, sievedb.Cursor)
    assert not it.valid()
    it.seek_to_first()
    assert it.valid() and (it.key(), it.value()) == (b"a", b"A")
    assert it.item() == (b"a", b"A")
    it.seek_to_last()
    assert it.key() == b"g"
    it.seek(b"b")
    assert it.key() == b"c"
    it.seek(b"c")
    assert it.key() == b"c"
    it.seek_for_prev(b"d")
    assert it.key() == b"c"
    it.seek_for_prev(b"c")
    assert it.key() == b"c"
    it.seek(b"h")
    assert not it.valid()
    it.seek_for_prev(b"0")
    assert not it.valid()


def test_walks_both_ways_and_turns(db):
    fill(db)
    it = db.iter()
    it.seek_to_first()
    assert walk(it) == [b"a", b"c", b"e", b"g"]
    it.seek_to_last()
    assert walk_back(it) == [b"g", b"e", b"c", b"a"]
    it.seek(b"d")
    assert it.key() == b"e"
    it.next()
    assert it.key() == b"g"
    it.prev()
    assert it.key() == b"e"
    it.prev()
    assert it.key() == b"c"
    it.next()
    assert it.key() == b"e"
    it.seek_for_prev(b"f")
    it.prev()
    assert it.key() == b"c"


def test_invalid_cursor_raises_clearly(db):
    fill(db)
    it = db.iter()
    for call in (it.key, it.value, it.item, it.next, it.prev):
        with pytest.raises(sievedb.InvalidArgumentError, match="not on an entry"):
            call()
    it.seek_to_last()
    it.next()
    assert not it.valid()
    with pytest.raises(sievedb.InvalidArgumentError):
        it.key()
    # A seek makes it valid again.
    it.seek_to_first()
    assert it.key() == b"a"


def test_bounds(db):
    fill(db)
    it = db.iter(b"b", b"f")
    it.seek_to_first()
    assert walk(it) == [b"c", b"e"]
    it.seek_to_last()
    assert it.key() == b"e"
    it.seek(b"a")
    assert it.key() == b"c"
    it.seek(b"f")
    assert not it.valid()
    it.seek_for_prev(b"z")
    assert it.key() == b"e"
    it = db.iter(start=b"d")
    it.seek_to_first()
    assert walk(it) == [b"e", b"g"]
    it = db.iter(end=b"d")
    it.seek_to_last()
    assert walk_back(it) == [b"c", b"a"]


def test_empty_database(db):
    it = db.iter()
    it.seek_to_first()
    assert not it.valid()
    it.seek_to_last()
    assert not it.valid()


def test_one_view_for_every_position(db):
    fill(db)
    it = db.iter()
    db[b"b"] = b"B"
    del db[b"c"]
    db[b"a"] = b"new"
    it.seek_to_first()
    assert walk(it) == [b"a", b"c", b"e", b"g"]
    it.seek(b"a")
    assert it.value() == b"A"
    it.seek(b"c")
    assert it.key() == b"c"
    # A new cursor sees the writes.
    it2 = db.iter()
    it2.seek_to_first()
    assert walk(it2) == [b"a", b"b", b"e", b"g"]


def test_deleted_and_range_deleted_keys_are_skipped(db):
    fill(db, [b"k%02d" % i for i in range(20)])
    db.delete_range(b"k05", b"k15")
    del db[b"k02"]
    it = db.iter()
    it.seek(b"k04")
    it.next()
    assert it.key() == b"k15"
    it.prev()
    assert it.key() == b"k04"
    it.prev()
    assert it.key() == b"k03"
    it.prev()
    assert it.key() == b"k01"


def test_many_keys_across_files(tmp_path):
    with sievedb.Db(tmp_path / "db", write_buffer_size=64 << 10) as db:
        for i in range(5000):
            db[b"k%05d" % i] = b"v" * 50
        db.flush()
        for i in range(0, 5000, 2):
            db[b"k%05d" % i] = b"w"
        it = db.iter()
        it.seek(b"k02500")
        assert (it.key(), it.value()) == (b"k02500", b"w")
        it.next()
        assert (it.key(), it.value()) == (b"k02501", b"v" * 50)
        it.seek_to_first()
        assert len(walk(it)) == 5000
        it.seek_to_last()
        assert len(walk_back(it)) == 5000


def test_keyspace_cursor(db):
    ks = db.keyspace("other")
    fill(ks)
    db[b"b"] = b"default"
    it = ks.iter()
    it.seek_to_first()
    assert walk(it) == [b"a", b"c", b"e", b"g"]
    it = ks.iter(b"c", b"g")
    it.seek_to_last()
    assert it.key() == b"e"


def test_snapshot_cursor(db):
    fill(db)
    ks = db.keyspace("other")
    ks[b"x"] = b"1"
    with db.snapshot() as snap:
        db[b"b"] = b"B"
        ks[b"y"] = b"2"
        it = snap.iter()
        it.seek_to_first()
        assert walk(it) == [b"a", b"c", b"e", b"g"]
        it = snap.iter(b"b", b"z")
        it.seek_to_first()
        assert walk(it) == [b"c", b"e", b"g"]
        it = snap.iter(keyspace=ks)
        it.seek_to_first()
        assert walk(it) == [b"x"]
        it = snap.iter(start=b"x", end=b"y", keyspace=ks)
        it.seek_to_last()
        assert walk_back(it) == [b"x"]


def test_closed_database_raises_closed_error(tmp_path):
    db = sievedb.Db(tmp_path / "db")
    fill(db)
    it = db.iter()
    it.seek_to_first()
    db.close()  # the cursor does not keep it open (no BusyError)
    for call in (it.valid, it.key, it.value, it.next, it.prev, it.seek_to_first, it.seek_to_last):
        with pytest.raises(sievedb.ClosedError):
            call()
    with pytest.raises(sievedb.ClosedError):
        it.seek(b"a")
    with pytest.raises(sievedb.ClosedError):
        it.seek_for_prev(b"a")
    with pytest.raises(sievedb.ClosedError):
        db.iter()
    sievedb.Db(tmp_path / "db").close()


def test_close_and_context_manager(db):
    fill(db)
    with db.iter() as it:
        it.seek_to_first()
        assert it.key() == b"a"
    with pytest.raises(sievedb.ClosedError, match="cursor was closed"):
        it.valid()
    it.close()  # twice is fine
    assert "closed" in repr(it)


def test_keys_of_any_type(db):
    fill(db)
    it = db.iter(start="b", end=memoryview(b"f"))
    it.seek(bytearray(b"d"))
    assert it.key() == b"e"
    it.seek_for_prev("d")
    assert it.key() == b"c"
    with pytest.raises(TypeError):
        it.seek(3)


def test_threads_share_a_cursor(db):
    fill(db, [b"k%04d" % i for i in range(2000)])
    it = db.iter()
    errors = []

    def seeker():
        try:
            for i in range(300):
                it.seek(b"k%04d" % (i * 5))
                it.next()
        except Exception as e:  # pragma: no cover
            errors.append(e)

    def reader():
        try:
            for _ in range(3000):
                if it.valid():
                    try:
                        it.key()
                    except sievedb.InvalidArgumentError:
                        pass  # moved off an end meanwhile
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=f) for f in (seeker, seeker, reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []

"""key_may_exist (RocksDB's KeyMayExist): False means surely absent."""

import pytest

import sievedb


def test_db(db):
    assert db.key_may_exist(b"k") is False
    db[b"k"] = b"v"
    assert db.key_may_exist(b"k") is True
    assert db.key_may_exist(memoryview(b"k")) is True
    # Nothing flushed yet: no filter to give a false positive.
    assert db.key_may_exist(b"never") is False
    db.flush()
    # A key in a table file: its filter says it may exist (an absent key
    # may too, rarely: a false positive, so it is not asserted here).
    assert db.key_may_exist("k") is True


def test_keyspace(db):
    ks = db.keyspace("other")
    db[b"only-default"] = b"x"
    assert ks.key_may_exist(b"k") is False
    ks[b"k"] = b"v"
    assert ks.key_may_exist(b"k") is True
    assert ks.key_may_exist(b"only-default") is False


def test_closed(tmp_path):
    db = sievedb.Db(tmp_path / "db")
    db.close()
    with pytest.raises(sievedb.ClosedError):
        db.key_may_exist(b"k")

"""plyvel's `with db.write_batch() as b:` and WriteBatch's mapping habits."""

import pytest

import sievedb


def test_writes_at_the_end_of_the_block(db):
    db[b"gone"] = b"x"
    with db.write_batch() as b:
        assert isinstance(b, sievedb.WriteBatch)
        b[b"a"] = b"1"
        b.put(b"b", b"2")
        del b[b"gone"]
        assert db.get(b"a") is None  # nothing written yet
        assert len(b) == 3
    assert (db[b"a"], db[b"b"], db.get(b"gone")) == (b"1", b"2", None)
    assert len(b) == 0  # written and cleared


def test_nothing_written_when_the_block_raises(db):
    with pytest.raises(KeyError):
        with db.write_batch() as b:
            b[b"a"] = b"1"
            raise KeyError("boom")
    assert db.get(b"a") is None
    assert len(b) == 0


def test_every_operation(tmp_path):
    with sievedb.Db(tmp_path / "db", merge_operator="append") as db:
        for k in (b"r1", b"r2", b"r3"):
            db[k] = b"x"
        db[b"m"] = b"a"
        with db.write_batch(sync=True) as b:
            b.merge(b"m", b"b")
            b.delete_range(b"r1", b"r3")
            b.delete(b"nothing")
        assert db[b"m"] == b"a,b"
        assert list(db.keys()) == [b"m", b"r3"]


def test_write_now(db):
    b = db.write_batch()
    b[b"k"] = b"v"
    b.write()
    assert db[b"k"] == b"v"
    assert len(b) == 0


def test_keyspace_batch_goes_to_the_keyspace(db):
    ks = db.keyspace("other")
    other = db.keyspace("third")
    with ks.write_batch() as b:
        b[b"k"] = b"in ks"
        b.put(b"j", b"in third", keyspace=other)
    assert ks[b"k"] == b"in ks"
    assert other[b"j"] == b"in third"
    assert db.get(b"k") is None


def test_plain_batch_mapping_habits(db):
    b = sievedb.WriteBatch()
    b[b"a"] = b"1"
    b["s"] = "2"
    del b[b"zz"]
    assert len(b) == 3
    db.write(b)
    assert (db[b"a"], db[b"s"]) == (b"1", b"2")


def test_plain_batch_has_no_database(db):
    b = sievedb.WriteBatch()
    with pytest.raises(TypeError, match="db.write"):
        with b:
            pass
    with pytest.raises(TypeError, match="db.write"):
        b.write()


def test_closed_database(tmp_path):
    db = sievedb.Db(tmp_path / "db")
    b = db.write_batch()
    b[b"k"] = b"v"
    db.close()
    with pytest.raises(sievedb.ClosedError):
        b.write()

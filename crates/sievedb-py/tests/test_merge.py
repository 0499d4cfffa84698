"""Merge operators from Python: the built-in "u64add" and "append", in
direct writes and batches, through reads, iteration, a flush, a compaction
and a reopen; errors for a missing operator and for bad options."""

import struct

import pytest

import sievedb


def u64(n):
    return struct.pack("<Q", n)


def test_counters(tmp_path):
    path = tmp_path / "db"
    with sievedb.Db(path, merge_operator="u64add") as db:
        for _ in range(10):
            db.merge(b"hits", u64(1))
        db.flush()
        b = sievedb.WriteBatch()
        b.merge(b"hits", u64(5))
        b.merge(b"other", u64(2))
        db.write(b)
        assert db[b"hits"] == u64(15)
        assert dict(db.items()) == {b"hits": u64(15), b"other": u64(2)}
        assert list(db.items(reverse=True))[0] == (b"other", u64(2))
        db.compact_range()
        assert db.stats()["merges"] == 12
    with sievedb.Db(path, merge_operator="u64add") as db:
        assert db.get(b"hits") == u64(15)


def test_append_with_a_separator(tmp_path):
    with sievedb.Db(tmp_path / "db", merge_operator="append", merge_separator="|") as db:
        db.put("log", "a")
        db.merge("log", "b")
        db.merge("log", "c")
        assert db["log"] == b"a|b|c"
        db.delete("log")
        db.merge("log", "d")
        with db.snapshot() as snap:
            db.merge("log", "e")
            assert snap["log"] == b"d"
        assert db["log"] == b"d|e"


def test_a_merge_without_an_operator_is_refused(tmp_path):
    with sievedb.Db(tmp_path / "db") as db:
        with pytest.raises(sievedb.InvalidArgumentError, match="merge_operator=") as e:
            db.merge(b"k", b"x")
        assert "Options" not in str(e.value)  # Python's spelling, not Rust's
        b = sievedb.WriteBatch()
        b.put(b"a", b"1")
        b.merge(b"k", b"x")
        with pytest.raises(sievedb.InvalidArgumentError, match="merge_operator="):
            db.write(b)
        assert db.get(b"a") is None  # nothing of the batch applied
        ks = db.keyspace("plain")
        with pytest.raises(sievedb.InvalidArgumentError, match='"plain".*merge_operator='):
            ks.merge(b"k", b"x")
        with db.transaction() as tx:
            with pytest.raises(sievedb.InvalidArgumentError, match="merge_operator="):
                tx.merge(b"k", b"x")
            tx[b"t"] = b"still usable"
        assert db[b"t"] == b"still usable"


def test_operands_read_without_an_operator_raise_merge_failed(tmp_path):
    with sievedb.Db(tmp_path / "db", merge_operator="append") as db:
        db.merge(b"k", b"x")
    # Reopened without the operator its operands were written with.
    with sievedb.Db(tmp_path / "db") as db:
        with pytest.raises(sievedb.MergeFailedError, match="merge_operator"):
            db.get(b"k")
        with pytest.raises(sievedb.Error):
            list(db.items())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"merge_operator": "nope"},
        {"merge_operator": 3},
        {"merge_operator": "u64add", "merge_separator": ","},
        {"merge_separator": ","},
    ],
)
def test_bad_merge_options_raise_value_error(tmp_path, kwargs):
    with pytest.raises(ValueError, match="merge_"):
        sievedb.Db(tmp_path / "db", **kwargs)


def test_ttl_option_is_durable_and_refuses_merges(tmp_path):
    path = tmp_path / "db"
    with sievedb.Db(path, ttl=3600, periodic_compaction=0) as db:
        db[b"k"] = b"v"
        assert db[b"k"] == b"v"
        with pytest.raises(sievedb.InvalidArgumentError):
            db.merge(b"k", b"x")
    with pytest.raises(sievedb.InvalidArgumentError, match="TTL|ttl"):
        sievedb.Db(path)
    with pytest.raises(ValueError, match="ttl"):
        sievedb.Db(tmp_path / "other", ttl=60, merge_operator="u64add")
    with pytest.raises(ValueError, match="ttl"):
        sievedb.Db(tmp_path / "other", ttl=-1)

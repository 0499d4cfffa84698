"""Db, Keyspace and Snapshot as collections.abc mappings: one test per part
of the protocol (the conformance suite is test_mapping_protocol.py)."""

import collections.abc as abc

import pytest

import sievedb


@pytest.fixture(params=["db", "keyspace"])
def m(request, db):
    """The default keyspace through Db, or a named Keyspace."""
    return db if request.param == "db" else db.keyspace("ks")


def fill(m, n=5):
    for i in range(n):
        m[b"k%d" % i] = b"v%d" % i


def test_registered_with_the_abcs(db):
    assert isinstance(db, abc.MutableMapping)
    assert isinstance(db.keyspace("ks"), abc.MutableMapping)
    snap = db.snapshot()
    assert isinstance(snap, abc.Mapping) and not isinstance(snap, abc.MutableMapping)
    assert isinstance(db.keys(), abc.KeysView)
    assert isinstance(db.values(), abc.ValuesView)
    assert isinstance(db.items(), abc.ItemsView)
    assert isinstance(snap.items(), abc.ItemsView)


def test_len_is_exact(m):
    assert len(m) == 0
    fill(m, 50)
    del m[b"k3"]
    m.delete_range(b"k40", b"k45")
    assert len(m) == 44
    assert len(m.keys(start=b"k1", end=b"k2")) == 11  # k1, k10..k19


def test_bool_is_one_seek(m):
    assert not m and bool(m) is False
    m[b"a"] = b"1"
    assert m and bool(m) is True
    m.delete(b"a")
    assert not m


def test_update_like_dict_and_atomic(m):
    m.update({b"a": b"1"}, b=b"2")
    m.update([(b"c", b"3")])
    m.update(m.items(start=b"a", end=b"b"), a=b"kw wins")  # pairs, then keywords

    class KeysOnly:
        def keys(self):
            return [b"d"]

        def __getitem__(self, k):
            return b"4"

    m.update(KeysOnly())
    m.update()
    assert dict(m.items()) == {b"a": b"kw wins", b"b": b"2", b"c": b"3", b"d": b"4"}
    with pytest.raises(ValueError):
        m.update([(b"x", b"1", b"extra")])
    with pytest.raises(TypeError):
        m.update(42)
    with pytest.raises(TypeError):
        m.update(None)  # as dict's: None is no mapping
    with pytest.raises(TypeError):
        m.update({}, {})

    def pairs_then_boom():
        yield (b"y", b"1")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        m.update(pairs_then_boom())
    with pytest.raises(TypeError):
        m.update([(b"z", b"1"), (b"bad", 3.5)])
    assert b"y" not in m and b"z" not in m  # one batch: nothing written


def test_pop(m):
    fill(m)
    assert m.pop(b"k1") == b"v1" and b"k1" not in m
    assert m.pop(b"k1", None) is None
    assert m.pop(b"k1", b"d") == b"d"
    with pytest.raises(KeyError):
        m.pop(b"k1")
    with pytest.raises(TypeError):
        m.pop(b"k1", 1, 2)


def test_setdefault(m):
    assert m.setdefault(b"a", b"1") == b"1"
    assert m.setdefault(b"a", b"2") == b"1"
    assert m[b"a"] == b"1"
    with pytest.raises(TypeError, match="default"):
        m.setdefault(b"absent")  # None is no bytes value
    assert b"absent" not in m
    assert m.setdefault(b"a") == b"1"  # present: no default needed


def test_popitem_pops_the_last_key(m):
    fill(m, 3)
    assert m.popitem() == (b"k2", b"v2")
    assert m.popitem() == (b"k1", b"v1")
    assert m.popitem() == (b"k0", b"v0")
    with pytest.raises(KeyError):
        m.popitem()


def test_clear_is_a_range_delete(m, db):
    fill(m, 100)
    other = db.keyspace("other")
    other[b"kept"] = b"1"
    m.clear()
    assert len(m) == 0 and not m and list(m) == []
    assert other[b"kept"] == b"1"  # only this keyspace


def test_reversed(m):
    fill(m, 3)
    assert list(reversed(m)) == [b"k2", b"k1", b"k0"]
    assert list(reversed(m.items())) == [(b"k2", b"v2"), (b"k1", b"v1"), (b"k0", b"v0")]
    assert list(reversed(m.values(start=b"k1"))) == [b"v2", b"v1"]
    assert list(reversed(m.keys(reverse=True))) == [b"k0", b"k1", b"k2"]


def test_eq_with_any_mapping(m, db):
    fill(m, 3)
    as_dict = {b"k0": b"v0", b"k1": b"v1", b"k2": b"v2"}
    assert m == as_dict and as_dict == m
    assert m != {b"k0": b"v0"}
    assert m == m
    other = db.keyspace("twin")
    other.update(as_dict)
    assert m == other
    snap = db.snapshot()
    assert snap == dict(db.items())
    assert (m == [1, 2]) is False and m != 3  # NotImplemented: identity
    with pytest.raises(TypeError):
        hash(m)  # a mapping compared by content is unhashable, as dict


def test_copy_is_a_dict(m):
    fill(m, 2)
    c = m.copy()
    assert type(c) is dict and c == {b"k0": b"v0", b"k1": b"v1"}


def test_iter_snapshot(db):
    fill(db, 3)
    snap = db.snapshot()
    db[b"later"] = b"x"
    assert list(snap) == [b"k0", b"k1", b"k2"]
    assert list(reversed(snap)) == [b"k2", b"k1", b"k0"]
    assert len(snap) == 3 and bool(snap)
    assert dict(snap) == {b"k0": b"v0", b"k1": b"v1", b"k2": b"v2"}
    assert list(snap.keys(start=b"k1")) == [b"k1", b"k2"]


def test_views_are_reiterable_and_live(m):
    fill(m, 3)
    keys, values, items = m.keys(), m.values(), m.items()
    assert list(keys) == list(keys) == [b"k0", b"k1", b"k2"]
    m[b"k3"] = b"v3"
    del m[b"k0"]
    assert list(keys) == [b"k1", b"k2", b"k3"]
    assert list(values) == [b"v1", b"v2", b"v3"]
    assert list(items)[-1] == (b"k3", b"v3")
    assert len(keys) == len(values) == len(items) == 3
    it = iter(keys)  # an iterator is one consistent view
    m[b"k4"] = b"v4"
    assert list(it) == [b"k1", b"k2", b"k3"]


def test_views_take_start_end_reverse(m):
    fill(m, 5)
    assert list(m.keys(start=b"k1", end=b"k3")) == [b"k1", b"k2"]
    assert list(m.keys(b"k1", b"k3", True)) == [b"k2", b"k1"]
    assert list(m.values(end=b"k2", reverse=True)) == [b"v1", b"v0"]
    v = m.items(start=b"k3")
    assert len(v) == 2 and (b"k4", b"v4") in v and (b"k1", b"v1") not in v
    k = m.keys(start=b"k1", end=b"k3")
    assert b"k1" in k and b"k3" not in k and b"k0" not in k
    assert b"v2" in m.values() and b"nope" not in m.values()
    assert (b"k1", b"wrong") not in m.items() and 42 not in m.items()


def test_view_set_operations_give_sets(m):
    fill(m, 3)
    k = m.keys()
    assert k & {b"k0", b"x"} == {b"k0"} and type(k & set()) is set
    assert {b"x"} | k == {b"k0", b"k1", b"k2", b"x"}
    assert k - [b"k1"] == {b"k0", b"k2"}
    assert [b"k1", b"x"] - k == {b"x"}
    assert k ^ {b"k0", b"x"} == {b"k1", b"k2", b"x"}
    assert k.isdisjoint([b"x"]) and not k.isdisjoint([b"k2"])
    assert k == {b"k0", b"k1", b"k2"} and k == {b"k0": 1, b"k1": 2, b"k2": 3}.keys()
    assert k <= {b"k0", b"k1", b"k2"} and k < {b"k0", b"k1", b"k2", b"x"}
    assert k >= {b"k0"} and k > {b"k0"} and not k > k and k != [b"k0", b"k1", b"k2"]
    i = m.items(end=b"k1")
    assert i | {(b"z", b"1")} == {(b"k0", b"v0"), (b"z", b"1")}
    assert i & m.items() == {(b"k0", b"v0")}
    assert i.isdisjoint({(b"k0", b"other")})


def test_views_raise_closed_error_after_close(tmp_path):
    db = sievedb.Db(tmp_path / "db")
    ks = db.keyspace("ks")
    fill(db, 3)
    views = [db.keys(), db.values(), db.items(), ks.keys()]
    snap_view = db.snapshot().items()
    db.close()
    for v in views + [snap_view]:
        with pytest.raises(sievedb.ClosedError):
            list(v)
        with pytest.raises(sievedb.ClosedError):
            len(v)
    with pytest.raises(sievedb.ClosedError):
        db.keys()
    with pytest.raises(sievedb.ClosedError):
        len(db)
    with pytest.raises(sievedb.ClosedError):
        db.update(a=b"1")


def test_transaction_is_unchanged(db):
    with db.transaction() as tx:
        tx[b"a"] = b"1"
        it = tx.items()
        assert next(it) == (b"a", b"1")  # still an iterator, not a view
    assert db[b"a"] == b"1"

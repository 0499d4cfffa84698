"""plyvel's db.iterator(...) arguments, on Db, Keyspace and Snapshot."""

import pytest

import sievedb

KEYS = [b"a", b"ab", b"abc", b"b", b"b\x00", b"ba", b"c"]


@pytest.fixture(params=["db", "keyspace", "snapshot", "snapshot-keyspace"])
def source(request, db):
    ks = db.keyspace("ks")
    target = db if request.param in ("db", "snapshot") else ks
    for k in KEYS:
        target[k] = k.upper()
    if request.param == "snapshot":
        snap = db.snapshot()
        db[b"late"] = b"x"
        return snap.iterator
    if request.param == "snapshot-keyspace":
        snap = db.snapshot()
        ks[b"late"] = b"x"
        return lambda **kw: snap.iterator(keyspace=ks, **kw)
    return target.iterator


def keys(it):
    return [k for k, _ in it]


def test_everything(source):
    assert keys(source()) == KEYS
    assert keys(source(reverse=True)) == KEYS[::-1]


@pytest.mark.parametrize(
    "kw,expected",
    [
        (dict(start=b"ab"), KEYS[1:]),
        (dict(start=b"ab", include_start=False), KEYS[2:]),
        (dict(stop=b"b"), KEYS[:3]),
        (dict(stop=b"b", include_stop=True), KEYS[:4]),
        (dict(start=b"b", stop=b"ba", include_start=False, include_stop=True), [b"b\x00", b"ba"]),
        (dict(start=b"b", stop=b"b", include_stop=True), [b"b"]),
        (dict(start=b"b", stop=b"b"), []),
        (dict(start=b"aa", include_start=False, stop=b"bb"), KEYS[1:6]),
        (dict(prefix=b"ab"), [b"ab", b"abc"]),
        (dict(prefix=b"b"), [b"b", b"b\x00", b"ba"]),
        (dict(prefix=b"z"), []),
    ],
)
def test_bounds(source, kw, expected):
    assert keys(source(**kw)) == expected
    assert keys(source(reverse=True, **kw)) == expected[::-1]


def test_keys_or_values(source):
    assert list(source(include_value=False, prefix=b"b")) == [b"b", b"b\x00", b"ba"]
    assert list(source(include_key=False, prefix=b"b")) == [b"B", b"B\x00", b"BA"]
    assert list(source(include_key=False, reverse=True, stop=b"ab")) == [b"A"]
    with pytest.raises(ValueError, match="cannot both be False"):
        source(include_key=False, include_value=False)


def test_prefix_excludes_start_and_stop(source):
    with pytest.raises(TypeError, match="prefix"):
        source(prefix=b"a", start=b"a")
    with pytest.raises(TypeError, match="prefix"):
        source(prefix=b"a", stop=b"b")
    # None is "not given".
    assert keys(source(prefix=b"ab", start=None, stop=None)) == [b"ab", b"abc"]


def test_returns_the_iterator_type(db):
    it = db.iterator()
    assert isinstance(it, sievedb.Iterator)
    it.close()


def test_buffers_as_bounds(db):
    for k in KEYS:
        db[k] = k
    assert keys(db.iterator(start=memoryview(b"b"), stop=bytearray(b"c"))) == [b"b", b"b\x00", b"ba"]
    assert keys(db.iterator(prefix=memoryview(b"ab"))) == [b"ab", b"abc"]

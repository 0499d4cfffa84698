"""Keys, values, prefixes and bounds from any contiguous buffer."""

import array

import pytest

import sievedb


def test_memoryview_and_array_as_keys_and_values(db):
    db[memoryview(b"k1")] = memoryview(b"v1")
    db.put(array.array("B", b"k2"), array.array("B", b"v2"))
    assert db[b"k1"] == b"v1"
    assert db[array.array("B", b"k2")] == b"v2"
    assert db.get(memoryview(b"k2")) == b"v2"
    assert memoryview(b"k1") in db
    del db[memoryview(b"k1")]
    assert b"k1" not in db
    # A slice of a larger buffer is contiguous.
    data = b"xxk2yy"
    assert db[memoryview(data)[2:4]] == b"v2"
    assert db.multi_get([memoryview(b"k2"), array.array("B", b"no")]) == [b"v2", None]


def test_a_wider_item_format_is_its_raw_bytes(db):
    a = array.array("H", [1, 2])
    db[a] = b"x"
    assert db[a.tobytes()] == b"x"


def test_ranges_prefixes_and_batches(db):
    for k in (b"a1", b"a2", b"b1"):
        db[k] = k
    assert list(db.keys(memoryview(b"a2"), array.array("B", b"b2"))) == [b"a2", b"b1"]
    assert [k for k, _ in db.prefix(memoryview(b"a"))] == [b"a1", b"a2"]
    b = sievedb.WriteBatch()
    b.put(memoryview(b"c1"), array.array("B", b"C"))
    b.delete(memoryview(b"a1"))
    db.write(b)
    assert db[b"c1"] == b"C" and b"a1" not in db
    db.delete_range(memoryview(b"a"), memoryview(b"b"))
    assert b"a2" not in db
    with db.snapshot() as s:
        assert s[memoryview(b"c1")] == b"C"


def test_non_contiguous_buffers_are_refused(db):
    strided = memoryview(b"abcdef")[::2]
    with pytest.raises(TypeError, match="contiguous"):
        db[strided] = b"v"
    with pytest.raises(TypeError, match="contiguous"):
        db[b"k"] = strided


def test_other_objects_are_refused(db):
    for bad in (3, 2.5, None, [1, 2], object()):
        with pytest.raises(TypeError, match="bytes, str or a buffer"):
            db[bad] = b"v"
    # An int is not a length (as bytes(3) would take it).
    with pytest.raises(TypeError):
        db.put(b"k", 3)

"""Typed values, opt-in: serializer="pickle" | "json" | an object with
dumps/loads, decode="utf-8", str_keys=True; and that the default stays bytes."""

import json
import pickle

import pytest

import sievedb


def test_pickle_round_trips_everywhere(tmp_path):
    with sievedb.Db(tmp_path / "db", serializer="pickle") as db:
        db[b"t"] = (1, "two", [3.0])
        db.put(b"d", {"a": None})
        assert db[b"t"] == (1, "two", [3.0])
        assert db.get(b"d") == {"a": None}
        assert db.get(b"missing", 7) == 7
        assert db.multi_get([b"t", b"missing"]) == [(1, "two", [3.0]), None]
        assert dict(db.items()) == {b"t": (1, "two", [3.0]), b"d": {"a": None}}
        assert list(db.values(reverse=True)) == [(1, "two", [3.0]), {"a": None}]
        assert (b"t", (1, "two", [3.0])) in db.items()
        assert db.setdefault(b"n") is None and db[b"n"] is None  # None is a value here
        db.update({b"u": 1}, v=[2])
        assert db.pop(b"u") == 1 and db.pop(b"v") == [2]
        assert db.popitem() == (b"t", (1, "two", [3.0]))
        # the stored bytes are pickle's (read through a handle without one)
        assert pickle.loads(db.keyspace("default", serializer="bytes")[b"d"]) == {"a": None}


def test_json_strings_and_bytes_out(tmp_path):
    with sievedb.Db(tmp_path / "db", serializer="json") as db:
        db[b"k"] = {"a": [1, 2]}
        assert db[b"k"] == {"a": [1, 2]}
        plain = db.keyspace("default", serializer="bytes")
        assert json.loads(plain[b"k"]) == {"a": [1, 2]}  # json.dumps' str, stored as UTF-8


def test_custom_serializer_object(tmp_path):
    class Upper:
        calls = 0

        def dumps(self, v):
            Upper.calls += 1
            return v.upper().encode()

        def loads(self, b):
            return b.decode().lower()

    with sievedb.Db(tmp_path / "db", serializer=Upper()) as db:
        db[b"k"] = "hello"
        assert db[b"k"] == "hello"
        assert db.keyspace("default", serializer="bytes")[b"k"] == b"HELLO"
        assert Upper.calls == 1


def test_decode_utf8_and_other_encodings(tmp_path):
    with sievedb.Db(tmp_path / "db", decode="utf-8") as db:
        db[b"k"] = "välue"
        db[b"b"] = b"raw"  # bytes are stored as they are
        assert db[b"k"] == "välue" and db[b"b"] == "raw"
        assert list(db.values()) == ["raw", "välue"]
        db[b"bad"] = b"\xff"
        with pytest.raises(UnicodeDecodeError):
            db[b"bad"]
    with sievedb.Db(tmp_path / "db2", decode="latin-1") as db:
        db[b"k"] = "é"
        assert db.keyspace("default", serializer="bytes")[b"k"] == b"\xe9"
        assert db[b"k"] == "é"


def test_str_keys(tmp_path):
    with sievedb.Db(tmp_path / "db", str_keys=True) as db:
        db["clé"] = b"v"
        assert list(db) == ["clé"] and list(db.items()) == [("clé", b"v")]
        assert db.popitem() == ("clé", b"v")


def test_bad_serializer_arguments(tmp_path):
    with pytest.raises(ValueError, match="serializer must be"):
        sievedb.Db(tmp_path / "db", serializer="yaml")
    with pytest.raises(TypeError, match="dumps"):
        sievedb.Db(tmp_path / "db", serializer=object())

    class HalfASerializer:
        def dumps(self, v):
            return b""

    with pytest.raises(TypeError, match="dumps"):
        sievedb.Db(tmp_path / "db", serializer=HalfASerializer())
    with pytest.raises(ValueError, match="mutually exclusive"):
        sievedb.Db(tmp_path / "db", serializer="pickle", decode="utf-8")
    with pytest.raises(LookupError):
        sievedb.Db(tmp_path / "db", decode="no-such-codec")
    with sievedb.Db(tmp_path / "db") as db:
        with pytest.raises(ValueError, match="mutually exclusive"):
            db.keyspace("ks", serializer="json", decode="utf-8")


def test_dumps_must_return_bytes(tmp_path):
    class Bad:
        def dumps(self, v):
            return 42

        def loads(self, b):
            return b

    with sievedb.Db(tmp_path / "db", serializer=Bad()) as db:
        with pytest.raises(TypeError, match="must return bytes or str"):
            db[b"k"] = "x"


def test_keyspace_snapshot_iterator_and_transaction_read_through_it(tmp_path):
    with sievedb.Db(tmp_path / "db", serializer="pickle") as db:
        ks = db.keyspace("ks")  # inherits pickle
        own = db.keyspace("own", serializer="json")
        raw = db.keyspace("raw", serializer="bytes")
        ks[b"k"] = {"x": 1}
        own[b"k"] = {"y": 2}
        raw[b"k"] = b"bytes"
        db[b"k"] = (1, 2)
        assert ks[b"k"] == {"x": 1} and own[b"k"] == {"y": 2} and raw[b"k"] == b"bytes"
        it = iter(ks.items())
        assert next(it) == (b"k", {"x": 1})
        with db.snapshot() as snap:
            ks[b"k"] = "later"
            assert snap[b"k"] == (1, 2)
            assert snap.get(b"k", keyspace=ks) == {"x": 1}
            assert snap.get(b"k", keyspace=own) == {"y": 2}
            assert list(snap.items(keyspace=ks)) == [(b"k", {"x": 1})]
            assert list(snap.values()) == [(1, 2)]
            assert dict(snap) == {b"k": (1, 2)}
        with db.transaction() as tx:
            assert tx[b"k"] == (1, 2)
            tx.put(b"t", [1])
            tx.put(b"t", {"j": 1}, keyspace=own)
            assert tx.get(b"t") == [1] and tx.get(b"t", keyspace=own) == {"j": 1}
            assert list(tx.items(keyspace=own)) == [(b"k", {"y": 2}), (b"t", {"j": 1})]
        assert db[b"t"] == [1] and own[b"t"] == {"j": 1}


def test_write_batch(tmp_path):
    with sievedb.Db(tmp_path / "db", serializer="pickle") as db:
        ks = db.keyspace("ks")
        batch = sievedb.WriteBatch()
        batch.put(b"k", {"via": "ks"}, keyspace=ks)  # bound to ks: pickled
        with pytest.raises(TypeError):
            batch.put(b"k", {"unbound": 1})  # no database yet: bytes only
        batch.put(b"raw", pickle.dumps("by hand"))
        db.write(batch)
        assert ks[b"k"] == {"via": "ks"} and db[b"raw"] == "by hand"


def test_merge_operands_are_not_serialized(tmp_path):
    with sievedb.Db(tmp_path / "db", serializer="pickle") as db:
        log = db.keyspace("log", merge_operator="append", serializer="bytes")
        log.merge(b"k", b"a")
        log.merge(b"k", b"b")
        assert log[b"k"] == b"a,b"
        pickled = db.keyspace("log")  # the database's pickle
        with pytest.raises(TypeError):
            pickled.merge(b"k", ["not", "bytes"])  # operands are raw bytes
        with pytest.raises(pickle.UnpicklingError):
            pickled[b"k"]  # and the merged value is the operator's, not pickle's


def test_default_is_bytes(tmp_path):
    with sievedb.Db(tmp_path / "db") as db:
        db[b"k"] = "str is UTF-8"
        assert db[b"k"] == b"str is UTF-8"
        with pytest.raises(TypeError):
            db[b"k"] = 1

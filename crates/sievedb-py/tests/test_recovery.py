"""What recovery dropped, said in Python: `Db.recovery_report()`, a
`sievedb.RecoveryWarning` at open, and the counts in `stats()` and the
`sievedb.recovery-dropped-*` properties."""

import warnings

import pytest

import sievedb

N = 3000


def write_unflushed(path, n=N):
    """n puts that stay in the WAL (a close syncs the WAL, never flushes)."""
    with sievedb.Db(path) as db:
        for i in range(n):
            db.put(b"k%05d" % i, b"v%05d" % i * 8)


def the_wal(path):
    logs = [p for p in path.iterdir() if p.suffix == ".log" and p.stat().st_size > 0]
    assert len(logs) == 1, logs
    return logs[0]


def flip(file, at, mask=0x40):
    data = bytearray(file.read_bytes())
    data[at] ^= mask
    file.write_bytes(bytes(data))
    return len(data)


def present(db, n=N):
    return sum(1 for i in range(n) if db.get(b"k%05d" % i) is not None)


def test_a_clean_open_warns_of_nothing(tmp_path):
    path = tmp_path / "db"
    write_unflushed(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with sievedb.Db(path) as db:
            report = db.recovery_report()
            assert report["dropped"] is None
            assert report["records_dropped"] == 0
            assert report["records_applied"] == N
            assert db.stats()["recovery_records_dropped"] == 0
            assert db.property_int("sievedb.recovery-dropped-records") == 0


def test_a_flipped_wal_byte_warns_and_is_counted(tmp_path):
    path = tmp_path / "db"
    write_unflushed(path)
    size = flip(the_wal(path), the_wal(path).stat().st_size // 2)
    with pytest.warns(sievedb.RecoveryWarning, match="dropped") as caught:
        db = sievedb.Db(path)
    assert "recovery_report" in str(caught[0].message)
    with db:
        report = db.recovery_report()
        dropped = report["dropped"]
        assert dropped is not None and 0 < dropped["offset"] < size
        assert report["records_dropped"] > 0
        # The damaged record, and every intact one after it, is counted.
        assert present(db) + report["entries_dropped"] + 1 == N
        assert report["bytes_dropped"] > 0
        stats = db.stats()
        assert stats["recovery_records_dropped"] == report["records_dropped"]
        assert stats["recovery_entries_dropped"] == report["entries_dropped"]
        assert db.property_int("sievedb.recovery-dropped-records") == report["records_dropped"]
        assert db.property_int("sievedb.recovery-dropped-bytes") == stats["recovery_bytes_dropped"]
        # The warned-of drop is said once: a reopen recovers nothing more.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sievedb.Db(path).close()


def test_a_read_only_open_warns_too(tmp_path):
    path = tmp_path / "db"
    write_unflushed(path, 200)
    flip(the_wal(path), 100)
    with pytest.warns(sievedb.RecoveryWarning):
        db = sievedb.Db.open_read_only(path)
    with db:
        assert db.recovery_report()["records_dropped"] > 0


def test_every_flip_that_drops_writes_warns(tmp_path):
    """A sweep of WAL byte flips: each one that loses acknowledged writes
    warns, and the report counts something dropped."""
    pristine = tmp_path / "pristine"
    write_unflushed(pristine, 300)
    wal = the_wal(pristine)
    size = wal.stat().st_size
    data = wal.read_bytes()
    for at in range(0, size, 61):
        case = tmp_path / f"flip{at}"
        case.mkdir()
        for f in pristine.iterdir():
            (case / f.name).write_bytes(f.read_bytes())
        (case / wal.name).write_bytes(data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            db = sievedb.Db(case)
        with db:
            lost = 300 - present(db, 300)
            report = db.recovery_report()
            warned = [w for w in caught if issubclass(w.category, sievedb.RecoveryWarning)]
            if lost:
                assert warned, f"flip at {at} lost {lost} writes without a warning"
                assert report["records_dropped"] > 0, f"flip at {at}"
            else:
                assert not warned, f"flip at {at} lost nothing but warned"


def test_recovery_warning_is_a_user_warning():
    assert issubclass(sievedb.RecoveryWarning, UserWarning)
    assert "RecoveryWarning" in sievedb.__all__

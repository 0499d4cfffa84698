"""Errors: bad options raise ValueError naming them; engine errors are
subclasses of sievedb.Error; I/O errors are OSError."""

import pytest

import sievedb


def test_unknown_option_names_it(tmp_path):
    with pytest.raises(ValueError, match="no_such_option"):
        sievedb.Db(tmp_path / "db", no_such_option=1)


@pytest.mark.parametrize(
    "name,value",
    [
        ("write_buffer_size", "big"),
        ("write_buffer_size", -1),
        ("write_buffer_size", True),
        ("bits_per_key", "ten"),
        ("bits_per_key", float("nan")),
        ("use_direct_reads", 1),
        ("compaction_style", "sideways"),
        ("filter_policy", "random"),
        ("compression", "gzip9"),
        ("compression_per_level", "none"),
        ("bg_error_resume_retry_interval", -1.0),
    ],
)
def test_bad_values_name_the_option(tmp_path, name, value):
    with pytest.raises(ValueError, match=name):
        sievedb.Db(tmp_path / "db", **{name: value})


def test_values_the_engine_refuses_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="max_open_files"):
        sievedb.Db(tmp_path / "db", max_open_files=3)


def test_locked_directory(tmp_path):
    with sievedb.Db(tmp_path / "db"):
        with pytest.raises(sievedb.LockedError) as e:
            sievedb.Db(tmp_path / "db")
        assert isinstance(e.value, sievedb.Error)


def test_missing_database_without_create(tmp_path):
    with pytest.raises(sievedb.Error):
        sievedb.Db(tmp_path / "nothing", create_if_missing=False)


def test_error_if_exists(tmp_path):
    sievedb.Db(tmp_path / "db").close()
    with pytest.raises(sievedb.Error):
        sievedb.Db(tmp_path / "db", error_if_exists=True)


def test_read_only(tmp_path):
    with sievedb.Db(tmp_path / "db") as db:
        db[b"k"] = b"v"
    with sievedb.Db.open_read_only(tmp_path / "db") as ro:
        assert ro[b"k"] == b"v"
        with pytest.raises(sievedb.UnsupportedError, match="read-only"):
            ro[b"k"] = b"w"


def test_io_errors_are_os_errors(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OSError):
        sievedb.Db(blocker / "db")


def test_corruption_is_reported_and_repair_reports(tmp_path):
    path = tmp_path / "db"
    with sievedb.Db(path) as db:
        for i in range(1000):
            db[b"k%04d" % i] = b"v" * 100
        db.flush()
    sst = sorted(path.glob("*.sst"))[0]
    data = bytearray(sst.read_bytes())
    data[100] ^= 0xFF
    sst.write_bytes(bytes(data))
    with pytest.raises(sievedb.CorruptionError):
        with sievedb.Db(path, verify_checksums=True) as db:
            list(db.items())
    report = sievedb.Db.repair(path)
    assert report["tables_damaged"] == 1
    with sievedb.Db(path) as db:
        list(db.items())


def test_a_cut_or_missing_table_fails_the_open(tmp_path):
    path = tmp_path / "db"
    with sievedb.Db(path, level0_compaction_trigger=8) as db:
        for i in range(100):
            db[b"a%03d" % i] = b"x"
        db.flush()
        for i in range(100):
            db[b"b%03d" % i] = b"y"
        db.flush()
    ssts = sorted(path.glob("*.sst"))
    assert len(ssts) == 2
    ssts[0].write_bytes(ssts[0].read_bytes()[:-1])
    with pytest.raises(sievedb.CorruptionError, match=ssts[0].name):
        sievedb.Db(path)
    with pytest.raises(sievedb.CorruptionError, match=r"sievedb\.Db\.repair\(path\)"):
        sievedb.Db.open_read_only(path)
    with sievedb.Db.open_read_only(path, skip_checking_sst_file_sizes_on_db_open=True) as db:
        assert db[b"b000"] == b"y"
    ssts[1].unlink()
    with pytest.raises(sievedb.CorruptionError, match="is missing"):
        sievedb.Db(path, skip_checking_sst_file_sizes_on_db_open=True)
    assert "skip_checking_sst_file_sizes_on_db_open" in sievedb.OPTIONS
    report = sievedb.Db.repair(path)
    # The cut lost a byte of the footer only: a scan finds every block. The
    # deleted table is listed with what it held.
    (damaged,) = report["damaged_tables"]
    assert damaged["number"] == int(ssts[0].stem)
    assert damaged["method"] == "Scan"
    assert (damaged["entries"], damaged["salvaged"], damaged["lost"]) == (100, 100, 0)
    (missing,) = report["tables_missing"]
    assert missing["number"] == int(ssts[1].stem)
    assert (missing["keyspace"], missing["level"], missing["entries"]) == ("default", 0, 100)
    assert (missing["smallest"], missing["largest"]) == (b"b000", b"b099")
    assert report["entries_lost"] == 100 + damaged["lost"]
    with sievedb.Db(path) as db:
        assert db.get(b"b000") is None
        assert sum(1 for _ in db.keys()) == damaged["salvaged"]


def test_exception_hierarchy():
    for cls in [
        sievedb.CorruptionError,
        sievedb.InvalidArgumentError,
        sievedb.LockedError,
        sievedb.BusyError,
        sievedb.PoisonedError,
        sievedb.UnsupportedError,
        sievedb.ReadOnlyError,
        sievedb.ClosedError,
    ]:
        assert issubclass(cls, sievedb.Error)
        assert cls.__module__ == "sievedb"
    assert issubclass(sievedb.Error, Exception)


# OSError subclasses, errno, strerror, filename; Python spellings.

import errno as _errno
import importlib.metadata
import os


def test_missing_database_is_file_not_found(tmp_path):
    path = tmp_path / "nothing"
    with pytest.raises(FileNotFoundError) as e:
        sievedb.Db(path, create_if_missing=False)
    assert isinstance(e.value, sievedb.DatabaseNotFoundError)
    assert isinstance(e.value, sievedb.InvalidArgumentError)
    assert e.value.errno == _errno.ENOENT
    assert e.value.filename == str(path)
    assert "create_if_missing=False" in e.value.strerror
    with pytest.raises(FileNotFoundError) as e:
        sievedb.Db.open_read_only(path)
    assert e.value.filename == str(path)
    assert "open_read_only" in str(e.value) and "::" not in str(e.value)


def test_not_a_directory_is_not_a_directory_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(NotADirectoryError) as e:
        sievedb.Db(blocker / "db")
    assert e.value.errno == _errno.ENOTDIR
    assert e.value.strerror == os.strerror(_errno.ENOTDIR)
    assert e.value.filename is not None and str(blocker) in e.value.filename


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root ignores permissions"
)
def test_read_only_directory_is_permission_error(tmp_path):
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o500)
    try:
        with pytest.raises(PermissionError) as e:
            sievedb.Db(parent / "db")
        assert e.value.errno == _errno.EACCES
        assert e.value.strerror == os.strerror(_errno.EACCES)
        assert e.value.filename is not None and str(parent) in e.value.filename
    finally:
        parent.chmod(0o700)


def test_repairing_a_missing_database_is_file_not_found(tmp_path):
    with pytest.raises(sievedb.DatabaseNotFoundError) as e:
        sievedb.Db.repair(tmp_path / "nothing")
    assert isinstance(e.value, FileNotFoundError)
    assert e.value.filename == str(tmp_path / "nothing")


def test_messages_name_python_spellings(tmp_path):
    with pytest.raises(ValueError, match='wal_recovery="point-in-time"') as e:
        sievedb.Db(tmp_path / "db", wal_recovery="sometimes")
    assert "WalRecovery" not in str(e.value)
    with pytest.raises(ValueError) as e:
        sievedb.Db(tmp_path / "db", compaction_style="sideways")
    assert "invalid argument" not in str(e.value)
    with pytest.raises(sievedb.InvalidArgumentError) as e:
        sievedb.Db.open_read_only(tmp_path / "db", error_if_exists=True)
    assert "Db::" not in str(e.value)


def test_engine_messages_are_translated(tmp_path):
    with sievedb.Db(tmp_path / "db") as db:
        db[b"k"] = b"v"
    with sievedb.Db.open_read_only(tmp_path / "db") as ro:
        with pytest.raises(sievedb.UnsupportedError) as e:
            ro[b"k"] = b"w"
        assert "sievedb.Db.open_read_only" in str(e.value) and "::" not in str(e.value)
    with sievedb.Db(tmp_path / "a") as a, sievedb.Db(tmp_path / "b") as b:
        ks = b.keyspace("ks")
        with a.snapshot() as snap:
            with pytest.raises(sievedb.InvalidArgumentError, match="the snapshot") as e:
                snap.get(b"k", keyspace=ks)
            assert "::" not in str(e.value)


def test_refused_combinations_name_the_options(tmp_path):
    with pytest.raises(ValueError, match="ttl and merge_operator") as e:
        sievedb.Db(tmp_path / "db", ttl=1.0, merge_operator="u64add")
    assert "::" not in str(e.value) and "invalid argument" not in str(e.value)


def test_version():
    assert sievedb.__version__ == importlib.metadata.version("sievedb")
    assert "__version__" in sievedb.__all__


def test_an_empty_path_is_refused_before_touching_the_disk(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for open_ in (sievedb.Db, sievedb.Db.open_read_only, sievedb.Db.repair):
        with pytest.raises(sievedb.InvalidArgumentError, match="empty"):
            open_("")
    with sievedb.Db(tmp_path / "db") as db:
        with pytest.raises(sievedb.InvalidArgumentError, match="empty"):
            db.checkpoint("")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db"]  # no ./LOCK

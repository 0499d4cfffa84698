"""Transactions: `with db.transaction() as tx:` commits or rolls back, reads
see the transaction's own writes, iteration merges them, savepoints,
keyspaces, conflicts as sievedb.ConflictError with a kind, pessimistic locks
waited for with the GIL released, and many threads moving money."""

import random
import threading
import time

import pytest

import sievedb


def test_the_block_commits_at_its_end(db):
    with db.transaction() as tx:
        tx[b"a"] = b"1"
        tx.put(b"b", b"2")
        assert db.get(b"a") is None, "not committed yet"
    assert db[b"a"] == b"1" and db[b"b"] == b"2"


def test_an_exception_rolls_back_and_goes_on(db):
    db[b"a"] = b"old"
    with pytest.raises(RuntimeError, match="boom"):
        with db.transaction() as tx:
            tx[b"a"] = b"new"
            tx[b"b"] = b"2"
            raise RuntimeError("boom")
    assert db[b"a"] == b"old" and b"b" not in db
    with pytest.raises(sievedb.InvalidArgumentError, match="rolled back"):
        tx.get(b"a")


def test_an_explicit_commit_or_rollback_ends_the_block_s_work(db):
    with db.transaction() as tx:
        tx[b"a"] = b"1"
        tx.commit()
    assert db[b"a"] == b"1"
    with db.transaction() as tx:
        tx[b"b"] = b"2"
        tx.rollback()
    assert b"b" not in db
    tx = db.transaction()
    tx[b"c"] = b"3"
    tx.commit(sync=True)
    assert db[b"c"] == b"3"


def test_reads_see_the_snapshot_and_their_own_writes(db):
    db[b"a"] = b"1"
    db[b"gone"] = b"x"
    tx = db.transaction()
    db[b"a"] = b"changed"  # after the snapshot
    assert tx[b"a"] == b"1"
    tx["s"] = "str keys are UTF-8"
    assert tx[b"s"] == b"str keys are UTF-8"
    tx[b"b"] = b"2"
    assert tx.get(b"b") == b"2" and b"b" in tx
    assert tx.get(b"nothing") is None
    assert tx.get(b"nothing", b"dflt") == b"dflt"
    with pytest.raises(KeyError):
        tx[b"nothing"]
    del tx[b"gone"]
    assert b"gone" not in tx and db[b"gone"] == b"x"
    with pytest.raises(KeyError):
        del tx[b"gone"]
    tx.delete(b"never-there")  # no error, as Db.delete
    assert tx.get_for_update(b"b") == b"2"
    assert tx.get_for_update(b"nothing", 0) == 0
    with pytest.raises(TypeError):
        tx[1] = b"v"
    tx.commit()
    assert db.get(b"gone") is None and db[b"b"] == b"2"


def test_iteration_merges_the_pending_writes(db):
    for k in [b"a", b"c", b"e", b"p1", b"p2", b"q"]:
        db[k] = b"db-" + k
    tx = db.transaction()
    tx[b"b"] = b"tx-b"
    del tx[b"c"]
    tx[b"e"] = b"tx-e"
    tx[b"p3"] = b"tx-p3"
    del tx[b"p1"]
    expected = [
        (b"a", b"db-a"),
        (b"b", b"tx-b"),
        (b"e", b"tx-e"),
        (b"p2", b"db-p2"),
        (b"p3", b"tx-p3"),
        (b"q", b"db-q"),
    ]
    assert list(tx.items()) == expected
    assert list(tx.items(reverse=True)) == expected[::-1]
    assert list(tx) == [k for k, _ in expected]
    assert list(tx.keys()) == [k for k, _ in expected]
    assert list(tx.values()) == [v for _, v in expected]
    assert list(tx.items(b"b", b"p3")) == expected[1:4]
    assert list(tx.items(start=b"c")) == expected[2:]
    assert list(tx.keys(end=b"e", reverse=True)) == [b"b", b"a"]
    assert list(tx.values(b"e", b"q", reverse=True)) == [b"tx-p3", b"db-p2", b"tx-e"]
    assert list(tx.prefix(b"p")) == [(b"p2", b"db-p2"), (b"p3", b"tx-p3")]
    assert list(tx.prefix(b"p", reverse=True)) == [(b"p3", b"tx-p3"), (b"p2", b"db-p2")]
    # An iterator has the pending writes as they were when it was made.
    it = tx.keys()
    tx[b"aa"] = b"later"
    assert b"aa" not in list(it)
    assert b"aa" in list(tx.keys())
    # Nothing of it is in the database until it commits.
    assert [k for k in db] == [b"a", b"c", b"e", b"p1", b"p2", b"q"]
    tx.rollback()


def test_merge_in_a_transaction(tmp_path):
    with sievedb.Db(tmp_path / "db", merge_operator="u64add") as db:
        one = (1).to_bytes(8, "little")
        db.merge(b"n", one)
        with db.transaction() as tx:
            tx.merge(b"n", one)
            tx.merge(b"n", one)
            assert int.from_bytes(tx[b"n"], "little") == 3
            assert [(k, int.from_bytes(v, "little")) for k, v in tx.items()] == [(b"n", 3)]
        assert int.from_bytes(db[b"n"], "little") == 3


def test_savepoints_undo_the_writes_since(db):
    tx = db.transaction()
    tx[b"a"] = b"1"
    tx.set_savepoint()
    tx[b"a"] = b"2"
    tx[b"b"] = b"2"
    tx.set_savepoint()
    tx[b"c"] = b"3"
    tx.rollback_to_savepoint()
    assert b"c" not in tx and tx[b"a"] == b"2"
    tx.rollback_to_savepoint()
    assert tx[b"a"] == b"1" and b"b" not in tx
    with pytest.raises(sievedb.InvalidArgumentError, match="no savepoint"):
        tx.rollback_to_savepoint()
    tx.commit()
    assert list(db.items()) == [(b"a", b"1")]


def test_a_commit_is_atomic_across_keyspaces(db, tmp_path):
    users = db.keyspace("users")
    index = db.keyspace("by_email")
    with db.transaction() as tx:
        tx.put(b"u1", b"alice@example.com", keyspace=users)
        tx.put(b"alice@example.com", b"u1", keyspace=index)
        tx[b"count"] = b"1"
        assert tx.get(b"u1", keyspace=users) == b"alice@example.com"
        assert tx.get(b"u1") is None, "the default keyspace is another"
        assert list(tx.items(keyspace=index)) == [(b"alice@example.com", b"u1")]
        assert users.get(b"u1") is None
    assert users[b"u1"] == b"alice@example.com"
    assert index[b"alice@example.com"] == b"u1"
    assert db[b"count"] == b"1"
    # A rolled back one leaves nothing in any keyspace.
    with pytest.raises(ValueError):
        with db.transaction() as tx:
            tx.put(b"u2", b"bob@example.org", keyspace=users)
            tx.put(b"bob@example.org", b"u2", keyspace=index)
            assert tx.get_for_update(b"u2", keyspace=users) == b"bob@example.org"
            raise ValueError("no bob")
    assert list(users.keys()) == [b"u1"] and list(index.keys()) == [b"alice@example.com"]
    # Every form takes keyspace=.
    tx = db.transaction()
    tx.delete(b"u1", keyspace=users)
    assert list(tx.keys(keyspace=users)) == []
    assert list(tx.prefix(b"alice", keyspace=index)) == [(b"alice@example.com", b"u1")]
    assert list(tx.values(keyspace=index, reverse=True)) == [b"u1"]
    tx.commit()
    assert users.get(b"u1") is None
    # A keyspace of another database is refused.
    with sievedb.Db(tmp_path / "other") as other:
        theirs = other.keyspace("users")
        with pytest.raises(sievedb.InvalidArgumentError, match="another database"):
            db.transaction().put(b"k", b"v", keyspace=theirs)


def test_a_write_write_conflict_raises_conflict_error(db):
    db[b"k"] = b"0"
    t1 = db.transaction()
    t2 = db.transaction()
    t1[b"k"] = b"t1"
    t2[b"k"] = b"t2"
    t2[b"other"] = b"t2"
    t1.commit()
    with pytest.raises(sievedb.ConflictError) as e:
        t2.commit()
    assert isinstance(e.value, sievedb.Error)
    assert e.value.kind == "write"
    assert "write conflict" in str(e.value)
    assert db[b"k"] == b"t1" and b"other" not in db, "the loser wrote nothing"
    # Every later call raises the same conflict; rollback ends it.
    with pytest.raises(sievedb.ConflictError) as again:
        t2.get(b"k")
    assert again.value.kind == "write"
    t2.rollback()
    with pytest.raises(sievedb.InvalidArgumentError, match="rolled back"):
        t2.get(b"k")


def test_a_conflict_of_the_block_s_commit_propagates(db):
    with pytest.raises(sievedb.ConflictError) as e:
        with db.transaction() as tx:
            tx[b"k"] = b"tx"
            db[b"k"] = b"plain write"  # after the snapshot: first committer wins
    assert e.value.kind == "write"
    assert db[b"k"] == b"plain write"
    # get_for_update makes a key read count as written.
    db[b"r"] = b"0"
    tx = db.transaction()
    assert tx.get_for_update(b"r") == b"0"
    tx[b"unrelated"] = b"x"
    db[b"r"] = b"1"
    with pytest.raises(sievedb.ConflictError, match="write conflict"):
        tx.commit()


def test_conflict_error_is_an_error_with_a_kind():
    assert issubclass(sievedb.ConflictError, sievedb.Error)
    assert sievedb.ConflictError.__module__ == "sievedb"
    assert sievedb.ConflictError("made in Python").kind is None


def test_a_pessimistic_lock_wait_times_out(db):
    holder = db.transaction(pessimistic=True)
    holder[b"k"] = b"held"
    result = {}

    def waiter():
        tx = db.transaction(pessimistic=True, lock_timeout=0.1)
        t0 = time.monotonic()
        try:
            tx[b"k"] = b"waiter"
        except sievedb.ConflictError as e:
            result["error"] = e
        result["waited"] = time.monotonic() - t0
        # The failed transaction answers every call with that conflict.
        try:
            tx.get(b"k")
        except sievedb.ConflictError as e:
            result["again"] = e.kind

    th = threading.Thread(target=waiter)
    th.start()
    th.join()
    assert result["error"].kind == "lock_timeout"
    assert result["waited"] >= 0.09
    assert result["again"] == "lock_timeout"
    holder.commit()
    assert db[b"k"] == b"held"


def test_a_deadlock_fails_one_transaction_at_once(db):
    # t1 holds x and wants y; t2 holds y and wants x: whichever asks second
    # would close the cycle and fails at once; the other then commits.
    t1 = db.transaction(pessimistic=True, lock_timeout=10)
    t2 = db.transaction(pessimistic=True, lock_timeout=10)
    t1[b"x"] = b"t1"
    t2[b"y"] = b"t2"
    out = {}

    def run(name, tx, key):
        try:
            tx[key] = name
            tx.commit()
            out[name] = "committed"
        except sievedb.ConflictError as e:
            out[name] = e.kind
            tx.rollback()  # releases its locks: the other goes on

    threads = [
        threading.Thread(target=run, args=(b"t1", t1, b"y")),
        threading.Thread(target=run, args=(b"t2", t2, b"x")),
    ]
    t0 = time.monotonic()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert time.monotonic() - t0 < 5, "detected, not timed out"
    assert sorted(out.values()) == ["committed", "deadlock"], out
    (winner,) = [name for name, r in out.items() if r == "committed"]
    assert db[b"x"] == winner and db[b"y"] == winner


@pytest.mark.parametrize("pessimistic", [False, True])
def test_serializable_refuses_write_skew(db, pessimistic):
    # Two doctors on call; each may go off call if the other stays on.
    def go_off_call(tx, me, other):
        if tx[other] == b"on":
            tx[me] = b"off"

    for isolation, refused in [("snapshot", False), ("serializable", True)]:
        db[b"alice"] = b"on"
        db[b"bob"] = b"on"
        t1 = db.transaction(pessimistic=pessimistic, isolation=isolation)
        t2 = db.transaction(pessimistic=pessimistic, isolation=isolation)
        assert t1.isolation == isolation and t1.pessimistic == pessimistic
        go_off_call(t1, b"alice", b"bob")
        go_off_call(t2, b"bob", b"alice")
        t1.commit()
        if refused:
            with pytest.raises(sievedb.ConflictError) as e:
                t2.commit()
            assert e.value.kind == "read"
            assert (db[b"alice"], db[b"bob"]) == (b"off", b"on")
        else:
            t2.commit()  # write skew: nobody is on call
            assert (db[b"alice"], db[b"bob"]) == (b"off", b"off")


def test_serializable_refuses_a_phantom_in_a_scanned_range(db):
    db[b"job-1"] = b"x"
    tx = db.transaction(isolation="serializable")
    assert len(list(tx.prefix(b"job-"))) == 1
    tx[b"count"] = b"1"
    db[b"job-2"] = b"x"  # into the range it scanned
    with pytest.raises(sievedb.ConflictError) as e:
        tx.commit()
    assert e.value.kind == "read"


def test_a_transaction_older_than_the_memtables_is_too_old(tmp_path):
    with sievedb.Db(tmp_path / "db", write_buffer_size=64 << 10) as db:
        tx = db.transaction()
        tx[b"k"] = b"v"
        for i in range(2000):
            db[b"other%05d" % i] = b"x" * 100
        db.flush()
        with pytest.raises(sievedb.ConflictError) as e:
            tx.commit()
        assert e.value.kind == "too_old"


def test_use_after_the_end_raises_a_clear_error(db):
    tx = db.transaction()
    tx[b"k"] = b"v"
    tx.commit()
    for call in [
        lambda: tx.get(b"k"),
        lambda: tx.put(b"k", b"v"),
        lambda: tx[b"k"],
        lambda: tx.items(),
        lambda: tx.set_savepoint(),
        lambda: tx.commit(),
        lambda: tx.rollback(),
    ]:
        with pytest.raises(sievedb.InvalidArgumentError, match="the transaction was committed"):
            call()
    assert "committed" in repr(tx)
    # Once the database is closed, an open transaction is released (rolled
    # back), and close() is not kept from closing by it.
    open_tx = db.transaction()
    open_tx[b"lost"] = b"x"
    it = open_tx.items()
    db.close()
    with pytest.raises(sievedb.ClosedError):
        open_tx.get(b"k")
    with pytest.raises(sievedb.ClosedError):
        next(it)
    with pytest.raises(sievedb.ClosedError):
        db.transaction()


def test_a_block_whose_transaction_close_released_raises(tmp_path):
    db = sievedb.Db(tmp_path / "db")
    with pytest.raises(sievedb.ClosedError):
        with db.transaction() as tx:
            tx[b"k"] = b"v"
            db.close()  # rolls it back: its writes are lost, and the block says so
    with sievedb.Db(tmp_path / "db") as db:
        assert b"k" not in db


def test_options_are_checked_and_shown(db):
    with pytest.raises(ValueError, match="isolation"):
        db.transaction(isolation="linearizable")
    for bad in [-1.0, float("nan"), float("inf")]:
        with pytest.raises(ValueError, match="lock_timeout"):
            db.transaction(lock_timeout=bad)
    db[b"k"] = b"v"
    tx = db.transaction(pessimistic=True, isolation="serializable", lock_timeout=0.5,
                        deadlock_detect=False)
    assert tx.pessimistic and tx.isolation == "serializable"
    assert tx.snapshot_sequence >= 1
    assert repr(tx).startswith("sievedb.Transaction(pessimistic, serializable")
    tx.rollback()
    tx = db.transaction()
    assert not tx.pessimistic and tx.isolation == "snapshot"
    assert "optimistic" in repr(tx) and "active" in repr(tx)


def test_a_transaction_can_move_between_threads(db):
    tx = db.transaction(pessimistic=True)
    tx[b"main"] = b"1"

    def elsewhere():
        tx[b"thread"] = b"2"
        assert tx[b"main"] == b"1"

    th = threading.Thread(target=elsewhere)
    th.start()
    th.join()
    tx.commit()
    assert db[b"thread"] == b"2" and db[b"main"] == b"1"


@pytest.mark.parametrize("pessimistic", [False, True])
def test_threads_moving_money_keep_the_total(tmp_path, pessimistic):
    accounts, start, threads, moves = 10, 100, 4, 150
    with sievedb.Db(tmp_path / "db") as db:
        with db.transaction() as tx:
            for a in range(accounts):
                tx[b"acct%02d" % a] = b"%d" % start
        opts = {"pessimistic": pessimistic, "lock_timeout": 0.5}
        retries = [0] * threads
        errors = []
        audits = []
        done = threading.Event()

        def transfer(t, rng):
            src, dst = rng.sample(range(accounts), 2)
            amount = rng.randint(1, 30)
            while True:
                try:
                    with db.transaction(**opts) as tx:
                        a = int(tx.get_for_update(b"acct%02d" % src))
                        b = int(tx.get_for_update(b"acct%02d" % dst))
                        if a < amount:
                            return
                        tx[b"acct%02d" % src] = b"%d" % (a - amount)
                        tx[b"acct%02d" % dst] = b"%d" % (b + amount)
                    return
                except sievedb.ConflictError:
                    retries[t] += 1

        def worker(t):
            rng = random.Random(t)
            try:
                for _ in range(moves):
                    transfer(t, rng)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        def auditor():
            # A read-only transaction sees one snapshot: the total holds.
            while not done.is_set():
                with db.transaction() as tx:
                    audits.append(sum(int(v) for v in tx.values()))

        workers = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
        audit = threading.Thread(target=auditor)
        audit.start()
        for th in workers:
            th.start()
        for th in workers:
            th.join()
        done.set()
        audit.join()
        assert errors == []
        total = sum(int(v) for v in db.values())
        assert total == accounts * start
        assert audits and set(audits) == {accounts * start}
        assert all(int(v) >= 0 for v in db.values())
        print(f"pessimistic={pessimistic}: retries per thread {retries}, {len(audits)} audits")


def test_a_lock_wait_releases_the_gil(db):
    # A pessimistic transaction waits in one thread for a key another holds;
    # meanwhile this Python thread keeps running (were the GIL held for the
    # wait, it would stop until the lock wait timed out), then releases the
    # lock, and the waiter goes on.
    db[b"k"] = b"0"
    holder = db.transaction(pessimistic=True)
    holder[b"k"] = b"holder"
    about_to_wait = threading.Event()
    out = {}

    def waiter():
        tx = db.transaction(pessimistic=True, lock_timeout=30)
        about_to_wait.set()
        t0 = time.monotonic()
        try:
            out["value"] = tx.get_for_update(b"k")
            tx[b"k"] = b"waiter"
            tx.commit()
        except Exception as e:  # noqa: BLE001 - checked below
            out["error"] = e
        out["waited"] = time.monotonic() - t0

    th = threading.Thread(target=waiter)
    th.start()
    about_to_wait.wait()
    time.sleep(0.05)  # the waiter is in its lock wait by now
    t0 = time.monotonic()
    ticks = 0
    while time.monotonic() - t0 < 0.3:
        ticks += 1
    assert th.is_alive(), "the waiter still waits"
    assert ticks > 1000
    holder.rollback()  # releases the lock
    th.join(10)
    assert not th.is_alive()
    assert "error" not in out, out
    assert out["value"] == b"0"
    assert 0.3 <= out["waited"] < 10
    assert db[b"k"] == b"waiter"

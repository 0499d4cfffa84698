"""One Db from several Python threads: calls release the GIL, so threads
make progress together, and every write is seen."""

import threading
import time

import sievedb


def test_threads_write_and_read_one_db(tmp_path):
    with sievedb.Db(tmp_path / "db", write_buffer_size=256 << 10) as db:
        errors = []

        def worker(t):
            try:
                for i in range(2000):
                    k = b"t%d-%05d" % (t, i)
                    db.put(k, k)
                    assert db.get(k) == k
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert errors == []
        assert sum(1 for _ in db.keys()) == 8 * 2000


def test_a_long_call_lets_other_threads_run(tmp_path):
    # A pure Python thread counts; while the main thread is inside a long
    # engine call (a compaction of the whole tree) it must keep counting at
    # a good part of its own rate. Were the GIL held, it would stop for the
    # call but for one switch interval (5 ms). The tree grows until the
    # compaction outlasts 50 ms (a fast machine compacts 5 MB in less).
    with sievedb.Db(tmp_path / "db", write_buffer_size=64 << 10) as db:
        n = 50000
        for attempt in range(5):
            batch = sievedb.WriteBatch()
            for i in range(n):
                batch.put(b"k%07d" % i, b"%d" % attempt + b"v" * 100)
            db.write(batch)
            db.flush()
            stop = threading.Event()
            ticks = [0]

            def count():
                while not stop.is_set():
                    ticks[0] += 1

            th = threading.Thread(target=count)
            th.start()
            t0, n0 = time.perf_counter(), ticks[0]
            time.sleep(0.1)
            rate = (ticks[0] - n0) / (time.perf_counter() - t0)
            t0, n0 = time.perf_counter(), ticks[0]
            db.compact_range()
            seconds = time.perf_counter() - t0
            during = ticks[0] - n0
            stop.set()
            th.join()
            if seconds > 0.05:
                break
            n *= 2
        assert seconds > 0.02, "the call must outlast a switch interval for the test to mean anything"
        assert during > 0.2 * rate * seconds, (during, rate, seconds)


def test_close_waits_for_calls_in_flight(tmp_path):
    db = sievedb.Db(tmp_path / "db")
    for i in range(5000):
        db.put(b"k%05d" % i, b"v" * 50)
    results = []

    def reader():
        try:
            for _ in range(200):
                db.get(b"k00001")
            results.append("done")
        except sievedb.ClosedError:
            results.append("closed")

    th = threading.Thread(target=reader)
    th.start()
    db.close()
    th.join()
    assert results in (["done"], ["closed"])

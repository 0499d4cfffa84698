//! `Options::io_delay_ns`: every data block read from a file waits at least
//! the delay, the wait is counted in the lookup breakdown's `data` phase, and
//! block-cache hits do not wait.

use std::time::{Duration, Instant};

use sievedb::{Db, Options};

const DELAY_NS: u64 = 200_000;
const KEYS: u32 = 2000;

fn open(dir: &std::path::Path, delay_ns: u64, cache: u64) -> Db {
    let opts = Options::builder()
        .write_buffer_size(64 << 10)
        .block_cache_capacity(cache)
        .lookup_breakdown_every(1)
        .io_delay_ns(delay_ns)
        .build();
    let db = Db::open(dir, opts).unwrap();
    for i in 0..KEYS {
        db.put(format!("key{i:06}"), format!("value{i}")).unwrap();
    }
    db.flush().unwrap();
    db
}

#[test]
fn delayed_block_reads_take_at_least_the_delay_and_count_as_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), DELAY_NS, 0);
    assert_eq!(db.options().io_delay_ns, DELAY_NS);
    let n = 20u64;
    let before = db.stats();
    for i in 0..n {
        let key = format!("key{:06}", i * 97 % u64::from(KEYS));
        let t0 = Instant::now();
        assert!(db.get(&key).unwrap().is_some());
        // No block cache: every lookup reads its data block from the file.
        assert!(t0.elapsed() >= Duration::from_nanos(DELAY_NS), "{key}");
    }
    let d = db.stats().delta_since(&before);
    assert_eq!(d.block_cache_misses, n);
    let b = d.breakdown;
    assert_eq!(b.samples, n);
    assert!(b.data_ns >= n * DELAY_NS, "{b:?}");
    assert!(b.total_ns >= b.data_ns, "{b:?}");
}

#[test]
fn block_cache_hits_do_not_wait() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), DELAY_NS, 8 << 20);
    let key = "key000123";
    db.get(key).unwrap();
    let before = db.stats();
    for _ in 0..10 {
        assert!(db.get(key).unwrap().is_some());
    }
    let d = db.stats().delta_since(&before);
    // Every read was served by the cache, so none was delayed.
    assert_eq!((d.block_cache_hits, d.block_cache_misses), (10, 0));
}

#[test]
fn no_delay_by_default() {
    assert_eq!(Options::default().io_delay_ns, 0);
    assert_eq!(Options::builder().io_delay_ns(70).build().io_delay_ns, 70);
}

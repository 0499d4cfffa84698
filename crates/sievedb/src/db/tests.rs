//! Unit tests of faults that only a hook inside the crate can inject.

use super::*;
use std::cell::Cell;

thread_local! {
    /// Thread spawns on this thread left before one fails (`None`: never).
    static SPAWNS_BEFORE_FAILURE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Whether the next background-thread spawn on this thread must fail.
pub(super) fn injected_spawn_failure() -> bool {
    SPAWNS_BEFORE_FAILURE.with(|c| match c.get() {
        Some(0) => {
            c.set(None);
            true
        }
        Some(n) => {
            c.set(Some(n - 1));
            false
        }
        None => false,
    })
}

#[test]
fn a_failed_thread_spawn_at_open_releases_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        db.put(b"k", b"v").unwrap();
        db.close().unwrap();
    }
    // Fail the first spawn (the flush thread), then a later one (a
    // compaction thread, after the flush thread is running).
    for spawns_before in [0, 1] {
        SPAWNS_BEFORE_FAILURE.with(|c| c.set(Some(spawns_before)));
        let opts = Options::builder().background_threads(3).build();
        match Db::open(dir.path(), opts) {
            Err(Error::Io(e)) => assert!(e.to_string().contains("spawn"), "{e}"),
            Err(e) => panic!("expected the spawn failure, got {e}"),
            Ok(_) => panic!("the injected spawn failure did not fire"),
        }
        // The LOCK and the database were released: the next open works.
        let db = Db::open(dir.path(), Options::default()).unwrap();
        assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
        db.close().unwrap();
    }
}

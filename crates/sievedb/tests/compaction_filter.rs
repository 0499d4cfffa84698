//! Compaction filters: what `Keep`, `Remove` and `ChangeValue` do to the
//! data, which entries the filter is shown, and what a panicking filter does.

mod common;

use std::sync::{Arc, Mutex};

use sievedb::{CompactionFilter, CompactionStyle, Db, Decision, Error, Options};

/// Removes values `rm`, changes values `ch` to `changed`, panics on `boom`,
/// keeps the rest; records every call.
#[derive(Default)]
struct ByValue {
    calls: Mutex<Vec<(Vec<u8>, Vec<u8>)>>,
}

impl ByValue {
    fn calls_for(&self, key: &[u8]) -> usize {
        let calls = self.calls.lock().unwrap();
        calls.iter().filter(|(k, _)| k == key).count()
    }
}

impl CompactionFilter for ByValue {
    fn filter(&self, _level: usize, key: &[u8], value: &[u8]) -> Decision {
        self.calls
            .lock()
            .unwrap()
            .push((key.to_vec(), value.to_vec()));
        match value {
            b"rm" => Decision::Remove,
            b"ch" => Decision::ChangeValue(b"changed".to_vec()),
            b"boom" => panic!("the test filter panics"),
            _ => Decision::Keep,
        }
    }
}

fn open(dir: &std::path::Path, f: &Arc<ByValue>, style: CompactionStyle) -> Db {
    let opts = Options::builder()
        .compaction_filter(f.clone())
        .compaction_style(style)
        .max_levels(3)
        .level0_compaction_trigger(1)
        .size_ratio(2)
        .build();
    Db::open(dir, opts).unwrap()
}

#[test]
fn keep_remove_and_change_value_after_compact_range() {
    let dir = tempfile::tempdir().unwrap();
    let f = Arc::new(ByValue::default());
    let db = open(dir.path(), &f, CompactionStyle::Leveling);
    db.put("keep", "v").unwrap();
    db.put("remove", "rm").unwrap();
    db.put("change", "ch").unwrap();
    db.delete("gone").unwrap();
    db.flush().unwrap();
    // Flushes do not filter.
    assert!(f.calls.lock().unwrap().is_empty());
    assert_eq!(db.get("remove").unwrap().as_deref(), Some(&b"rm"[..]));

    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(db.get("keep").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get("remove").unwrap(), None);
    assert_eq!(db.get("change").unwrap().as_deref(), Some(&b"changed"[..]));
    let all: Vec<_> = db.iter().unwrap().map(|kv| kv.unwrap()).collect();
    assert_eq!(
        all,
        [
            (b"change".to_vec(), b"changed".to_vec()),
            (b"keep".to_vec(), b"v".to_vec())
        ]
    );
    assert_eq!(f.calls_for(b"gone"), 0, "never called for deletions");
    let s = db.stats();
    assert_eq!(s.compaction_filter_removed, 1);
    assert!(s.compaction_filter_changed >= 1);
    // The removed key left the disk (its tombstone reached the bottom).
    let entries: u64 = s.levels.iter().map(|l| l.entries).sum();
    assert_eq!(entries, 2, "{s}");

    // The filter's work is durable.
    db.close().unwrap();
    let db = open(dir.path(), &f, CompactionStyle::Leveling);
    assert_eq!(db.get("remove").unwrap(), None);
    assert_eq!(db.get("change").unwrap().as_deref(), Some(&b"changed"[..]));
}

#[test]
fn remove_does_not_resurrect_an_older_version_below() {
    let dir = tempfile::tempdir().unwrap();
    let f = Arc::new(ByValue::default());
    // Tiering, so that an L0 compaction merges into L1 instead of moving.
    let db = open(dir.path(), &f, CompactionStyle::Tiering);
    db.put("k", "old").unwrap();
    db.put("other", "x").unwrap();
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    // A second run fills L1 (T = 2 runs): both merge into L2, the last level.
    db.put("other", "x").unwrap();
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let s = db.stats();
    assert!(
        s.levels[2].entries >= 1,
        "old version at the last level: {s}"
    );

    db.put("k", "rm").unwrap();
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let s = db.stats();
    assert_eq!(s.compaction_filter_removed, 1, "{s}");
    assert!(
        s.levels[2].entries >= 1,
        "the old version is still below: {s}"
    );
    assert_eq!(
        db.get("k").unwrap(),
        None,
        "the old version must stay hidden"
    );
    assert_eq!(db.iter().unwrap().count(), 1);
    assert_eq!(db.iter().unwrap().rev().count(), 1);
    assert_eq!(db.get("other").unwrap().as_deref(), Some(&b"x"[..]));
    // At the bottom, tombstone and old version go.
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(db.get("k").unwrap(), None);
    let entries: u64 = db.stats().levels.iter().map(|l| l.entries).sum();
    assert_eq!(entries, 1);
}

#[test]
fn entries_a_snapshot_sees_are_not_filtered() {
    let dir = tempfile::tempdir().unwrap();
    let f = Arc::new(ByValue::default());
    let db = open(dir.path(), &f, CompactionStyle::Leveling);
    db.put("seen", "rm").unwrap();
    let snap = db.snapshot();
    db.put("after", "rm").unwrap();
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(f.calls_for(b"seen"), 0, "a live snapshot sees it");
    assert!(f.calls_for(b"after") >= 1);
    assert_eq!(snap.get("seen").unwrap().as_deref(), Some(&b"rm"[..]));
    assert_eq!(db.get("seen").unwrap().as_deref(), Some(&b"rm"[..]));
    assert_eq!(db.get("after").unwrap(), None);
    drop(snap);
    // Without the snapshot, the next compaction filters it.
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(db.get("seen").unwrap(), None);
}

#[test]
fn only_the_newest_version_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let f = Arc::new(ByValue::default());
    let db = open(dir.path(), &f, CompactionStyle::Leveling);
    db.put("k", "v1").unwrap();
    db.flush().unwrap();
    db.put("k", "v2").unwrap();
    db.flush().unwrap();
    db.compact_range::<&[u8], _>(..).unwrap();
    let calls = f.calls.lock().unwrap().clone();
    assert!(calls.iter().all(|(_, v)| v != b"v1"), "{calls:?}");
    assert!(calls.iter().any(|(_, v)| v == b"v2"));
}

#[test]
fn a_panicking_filter_fails_the_compaction_and_keeps_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let f = Arc::new(ByValue::default());
    // No background compaction: only compact_range meets the filter.
    let opts = Options::builder().compaction_filter(f.clone()).build();
    let db = Db::open(dir.path(), opts).unwrap();
    db.put("a", "1").unwrap();
    db.put("b", "boom").unwrap();
    db.flush().unwrap();
    let ssts = common::sst_files(dir.path());
    let r = db.compact_range::<&[u8], _>(..);
    assert!(matches!(r, Err(Error::Poisoned(_))), "{r:?}");
    // Reads go on; writes are refused until a reopen.
    assert_eq!(db.get("a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get("b").unwrap().as_deref(), Some(&b"boom"[..]));
    assert!(db.put("c", "3").is_err());
    assert_eq!(
        common::sst_files(dir.path()),
        ssts,
        "partial outputs removed"
    );
    drop(db);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get("b").unwrap().as_deref(), Some(&b"boom"[..]));
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(db.iter().unwrap().count(), 2);
}

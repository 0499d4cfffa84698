//! Prefix filters end to end: `Options::prefix_extractor`, the prefix
//! filters of SSTs and memtables, and the seeks that consult them
//! (`Db::prefix`, bounded iterators, `ReadOptions::prefix_same_as_start`),
//! across reopens, old files and extractor changes.

mod common;

use std::sync::Arc;

use common::Model;
use sievedb::{
    CappedPrefix, CompactionStyle, Db, FixedPrefix, Options, PrefixExtractor, ReadOptions, Stats,
};

/// 8-byte keys: a 4-byte prefix `p{n:03}` and a 4-byte suffix.
fn key(p: u32, s: u32) -> Vec<u8> {
    format!("p{p:03}{s:04}").into_bytes()
}

fn prefix(p: u32) -> Vec<u8> {
    format!("p{p:03}").into_bytes()
}

fn opts(x: Option<Arc<dyn PrefixExtractor>>) -> Options {
    let mut o = common::small_options(CompactionStyle::Leveling);
    o.prefix_extractor = x;
    o
}

fn fixed4() -> Option<Arc<dyn PrefixExtractor>> {
    Some(Arc::new(FixedPrefix::new(4)))
}

/// Writes the even prefixes `0, 2, .., 2·(n−1)` with 20 keys each, flushing
/// every few prefixes so that the tree has files in several levels and
/// then a few keys in the memtable.
fn fill(db: &Db, model: &mut Model, n: u32) {
    for p in 0..n {
        for s in 0..20 {
            let (k, v) = (key(2 * p, s), format!("v{p}.{s}").into_bytes());
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        if p % 10 == 9 {
            db.flush().unwrap();
        }
    }
    db.compact_range::<&[u8], _>(..).unwrap();
    // A few keys in level 0, and one in the memtable.
    for p in (0..n).step_by(7) {
        let (k, v) = (key(2 * p, 50), b"l0".to_vec());
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.flush().unwrap();
    db.put(key(0, 99), b"mem").unwrap();
    model.insert(key(0, 99), b"mem".to_vec());
}

fn scan(it: sievedb::DbIterator) -> Vec<(Vec<u8>, Vec<u8>)> {
    it.collect::<sievedb::Result<_>>().unwrap()
}

fn model_prefix(model: &Model, p: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .iter()
        .filter(|(k, _)| k.starts_with(p))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn delta(db: &Db, before: &Stats) -> Stats {
    db.stats().delta_since(before)
}

#[test]
fn absent_prefixes_read_no_block_and_hash_once_for_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(fixed4())).unwrap();
    let mut model = Model::new();
    fill(&db, &mut model, 60);
    let levels = db.stats().levels.iter().filter(|l| l.files > 0).count();
    assert!(
        levels >= 2,
        "files in {levels} levels: {:?}",
        db.stats().levels
    );

    // Present prefixes: what the model holds, one digest per seek.
    for p in [0, 2, 58, 118] {
        let before = db.stats();
        assert_eq!(
            scan(db.prefix(prefix(p)).unwrap()),
            model_prefix(&model, &prefix(p))
        );
        let d = delta(&db, &before);
        assert_eq!(
            (d.prefix_seeks, d.prefix_seek_digests),
            (1, 1),
            "{p}: {d:?}"
        );
    }
    // Longer prefixes than the extractor's take its prefix too.
    assert_eq!(
        scan(db.prefix(b"p0020").unwrap()),
        model_prefix(&model, b"p0020")
    );

    // Absent prefixes between the present ones: files are skipped, no block read.
    let before = db.stats();
    for p in 0..60 {
        assert!(scan(db.prefix(prefix(2 * p + 1)).unwrap()).is_empty());
    }
    let d = delta(&db, &before);
    assert_eq!(d.prefix_seeks, 60, "{d:?}");
    assert_eq!(d.prefix_seek_digests, 60, "one digest per seek: {d:?}");
    assert!(d.prefix_filter_skips >= 60, "{d:?}");
    assert!(d.data_block_reads <= 6, "false positives only: {d:?}");

    // The same seeks without an extractor read a block of (nearly) each.
    drop(db);
    let db = Db::open(dir.path(), opts(None)).unwrap();
    let before = db.stats();
    for p in 0..60 {
        assert!(scan(db.prefix(prefix(2 * p + 1)).unwrap()).is_empty());
    }
    let d = delta(&db, &before);
    assert_eq!((d.prefix_seeks, d.prefix_filter_skips), (0, 0));
    assert!(d.data_block_reads >= 60, "{d:?}");
}

#[test]
fn prefix_same_as_start_keeps_to_the_targets_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(fixed4())).unwrap();
    let mut model = Model::new();
    fill(&db, &mut model, 30);
    let ro = ReadOptions::default().prefix_same_as_start(true);
    let mut it = db.iter_opt(&ro).unwrap();
    // From the middle of a prefix to its end, and no further.
    it.seek(key(4, 10)).unwrap();
    let got = std::iter::from_fn(|| it.next().map(Result::unwrap)).collect::<Vec<_>>();
    let want: Vec<_> = model
        .range(key(4, 10)..)
        .take_while(|(k, _)| k.starts_with(&prefix(4)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(got.len(), 10);
    // An absent prefix: nothing, no block read.
    let before = db.stats();
    it.seek(key(5, 0)).unwrap();
    assert!(!it.valid());
    assert!(it.next().is_none());
    let d = delta(&db, &before);
    assert_eq!((d.prefix_seeks, d.prefix_seek_digests), (1, 1), "{d:?}");
    // Backward within the prefix.
    it.seek_for_prev(key(6, 3)).unwrap();
    let mut back = Vec::new();
    while let Some((k, _)) = it.prev_ref().unwrap() {
        back.push(k.to_vec());
    }
    assert_eq!(back, (0..=3).rev().map(|s| key(6, s)).collect::<Vec<_>>());
    // A target out of the domain (shorter than the prefix) reads in total order.
    it.seek(b"p01").unwrap();
    assert_eq!(it.key(), key(10, 0).as_slice());
    assert_eq!(it.count(), model.range(key(10, 0)..).count());
    // Without the option, a seek runs on past the prefix.
    let mut plain = db.iter_opt(&ReadOptions::default()).unwrap();
    plain.seek(key(5, 0)).unwrap();
    assert_eq!(plain.key(), key(6, 0).as_slice());
}

#[test]
fn bounded_seeks_within_one_prefix_use_the_filters() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(fixed4())).unwrap();
    let mut model = Model::new();
    fill(&db, &mut model, 30);
    let within = |lo: Vec<u8>, hi: Vec<u8>| {
        let before = db.stats();
        let ro = ReadOptions::default().lower_bound(&lo).upper_bound(&hi);
        let got = scan(db.iter_opt(&ro).unwrap());
        let want: Vec<_> = model
            .range(lo..hi)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(got, want);
        delta(&db, &before).prefix_seeks
    };
    assert_eq!(within(key(8, 2), key(8, 7)), 1);
    assert_eq!(within(key(9, 0), b"p00:".to_vec()), 1); // up to the prefix's end
    assert_eq!(within(key(9, 0), prefix(10)), 0); // spans prefixes: no filter
    assert_eq!(within(key(8, 2), key(10, 1)), 0);
    assert_eq!(db.range(key(8, 2)..key(8, 5)).unwrap().count(), 3);
}

#[test]
fn reopen_old_files_and_extractor_changes() {
    let dir = tempfile::tempdir().unwrap();
    let mut model = Model::new();
    // Files written without an extractor (as by older builds).
    {
        let db = Db::open(dir.path(), opts(None)).unwrap();
        fill(&db, &mut model, 20);
        // Flushed, level 0 holds two files, the compaction trigger: settle it
        // here, or the reopened database would rewrite these files under its
        // extractor while the skips below are counted.
        db.wait_for_compactions().unwrap();
    }
    let check = |db: &Db, model: &Model| {
        for p in 0..45 {
            assert_eq!(
                scan(db.prefix(prefix(p)).unwrap()),
                model_prefix(model, &prefix(p)),
                "prefix {p}"
            );
        }
        let ro = ReadOptions::default().prefix_same_as_start(true);
        let mut it = db.iter_opt(&ro).unwrap();
        it.seek(key(2, 5)).unwrap();
        let t = key(2, 5);
        let want = match &db.options().prefix_extractor {
            Some(x) => {
                let p = x.transform(&t);
                model
                    .range(t.clone()..)
                    .filter(|(k, _)| k.starts_with(p))
                    .count()
            }
            None => model.range(t.clone()..).count(),
        };
        assert_eq!(it.count(), want);
    };
    // Reopened with an extractor: the old files have no prefix filter and
    // are never skipped; new ones get one.
    {
        let db = Db::open(dir.path(), opts(fixed4())).unwrap();
        check(&db, &model);
        let before = db.stats();
        assert!(scan(db.prefix(prefix(3)).unwrap()).is_empty());
        assert_eq!(delta(&db, &before).prefix_filter_skips, 0);
        for s in 0..5 {
            db.put(key(41, s), b"new").unwrap();
            model.insert(key(41, s), b"new".to_vec());
        }
        db.flush().unwrap();
        check(&db, &model);
    }
    // Reopened under another extractor: files of fixed:4 are not skipped
    // (their prefixes are not this extractor's), and answers stay right.
    {
        let db = Db::open(dir.path(), opts(Some(Arc::new(FixedPrefix::new(3))))).unwrap();
        check(&db, &model);
        let before = db.stats();
        assert!(scan(db.prefix(b"p05").unwrap()).is_empty());
        assert_eq!(delta(&db, &before).prefix_filter_skips, 0);
        db.compact_range::<&[u8], _>(..).unwrap();
        check(&db, &model);
        // After a full compaction every file is fixed:3's.
        let before = db.stats();
        assert!(scan(db.prefix(b"p05").unwrap()).is_empty());
        assert!(delta(&db, &before).prefix_seeks == 1);
    }
    // And back to none.
    let db = Db::open(dir.path(), opts(None)).unwrap();
    check(&db, &model);
}

/// Keys ending in `:`-separated parts: the prefix is up to the first `:`,
/// keys without one are out of the domain.
#[derive(Debug)]
struct UpToColon;

impl PrefixExtractor for UpToColon {
    fn name(&self) -> &str {
        "up-to-colon"
    }
    fn in_domain(&self, key: &[u8]) -> bool {
        key.contains(&b':')
    }
    fn transform<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        let end = key
            .iter()
            .position(|&b| b == b':')
            .map_or(key.len(), |i| i + 1);
        &key[..end]
    }
}

#[test]
fn user_and_capped_extractors_with_keys_out_of_the_domain() {
    for x in [
        Arc::new(UpToColon) as Arc<dyn PrefixExtractor>,
        Arc::new(CappedPrefix::new(3)),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), opts(Some(x.clone()))).unwrap();
        let keys = [
            "a:1", "a:2", "ab", "ab:1", "abc", "abcd", "b", "b:", "b:x", "c:1",
        ];
        for (i, k) in keys.iter().enumerate() {
            db.put(k, i.to_string()).unwrap();
            if i == 4 {
                db.flush().unwrap();
            }
        }
        db.flush().unwrap();
        let ro = ReadOptions::default().prefix_same_as_start(true);
        for target in [
            "a:", "a:2", "ab", "ab:", "abc", "abcd", "b", "b:", "c", "zz", "",
        ] {
            let t = target.as_bytes();
            let want: Vec<&str> = match sievedb::filter::prefix::prefix_of(x.as_ref(), t) {
                Some(p) => keys
                    .iter()
                    .copied()
                    .filter(|k| k.as_bytes() >= t)
                    .filter(|k| {
                        sievedb::filter::prefix::prefix_of(x.as_ref(), k.as_bytes()) == Some(p)
                    })
                    .collect(),
                None => keys.iter().copied().filter(|k| k.as_bytes() >= t).collect(),
            };
            let mut it = db.iter_opt(&ro).unwrap();
            it.seek(t).unwrap();
            let got: Vec<String> = it
                .map(|kv| String::from_utf8(kv.unwrap().0).unwrap())
                .collect();
            assert_eq!(got, want, "{} seek {target:?}", x.name());
        }
        // `prefix()` is right whatever the extractor.
        for p in ["a", "a:", "ab", "b:", "abc", "c"] {
            let want: Vec<&str> = keys.iter().copied().filter(|k| k.starts_with(p)).collect();
            let got: Vec<String> = db
                .prefix(p)
                .unwrap()
                .map(|kv| String::from_utf8(kv.unwrap().0).unwrap())
                .collect();
            assert_eq!(got, want, "{} prefix {p:?}", x.name());
        }
    }
}

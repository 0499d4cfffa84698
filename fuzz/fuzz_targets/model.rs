#![no_main]
//! Model-based: arbitrary operation sequences against a BTreeMap, with flushes,
//! compactions, reopens and range deletes (direct and in batches).
use std::collections::BTreeMap;
use std::ops::Bound;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use sievedb::{Db, Options, WriteBatch};

#[derive(Arbitrary, Debug)]
enum Op {
    Put(u8, Vec<u8>),
    Delete(u8),
    Batch(Vec<(u8, Option<Vec<u8>>)>),
    Get(u8),
    Scan(u8, u8),
    Flush,
    Compact,
    Reopen,
    /// `delete_range` from key `a` to key `b`; `shape` picks the bound kinds.
    DeleteRange(u8, u8, u8),
    /// A batch mixing puts, deletes and range deletes, applied in order.
    MixedBatch(Vec<BatchOp>),
}

#[derive(Arbitrary, Debug)]
enum BatchOp {
    Put(u8, Vec<u8>),
    Delete(u8),
    DeleteRange(u8, u8, u8),
}

type Range = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// The bounds of a range delete: `shape` chooses, for each side, included,
/// excluded or (rarely) unbounded.
fn range(a: u8, b: u8, shape: u8) -> Range {
    let side = |k: u8, s: u8| match s % 5 {
        0 => Bound::Unbounded,
        1 | 2 => Bound::Included(key(k)),
        _ => Bound::Excluded(key(k)),
    };
    (side(a, shape), side(b, shape / 5))
}

fn in_range(k: &[u8], (lo, hi): &Range) -> bool {
    let above = match lo {
        Bound::Unbounded => true,
        Bound::Included(l) => k >= l.as_slice(),
        Bound::Excluded(l) => k > l.as_slice(),
    };
    let below = match hi {
        Bound::Unbounded => true,
        Bound::Included(h) => k <= h.as_slice(),
        Bound::Excluded(h) => k < h.as_slice(),
    };
    above && below
}

fn key(k: u8) -> Vec<u8> {
    format!("key{k:03}").into_bytes()
}

fn options() -> Options {
    Options::builder()
        .write_buffer_size(4096)
        .target_file_size(4096)
        .level1_size(16384)
        .block_size(256)
        .level0_compaction_trigger(2)
        .build()
}

fuzz_target!(|ops: Vec<Op>| {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open(dir.path(), options()).unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for op in ops.into_iter().take(200) {
        match op {
            Op::Put(k, v) => {
                db.put(key(k), &v).unwrap();
                model.insert(key(k), v);
            }
            Op::Delete(k) => {
                db.delete(key(k)).unwrap();
                model.remove(&key(k));
            }
            Op::Batch(entries) => {
                let mut b = WriteBatch::new();
                for (k, v) in entries.iter().take(20) {
                    match v {
                        Some(v) => b.put(key(*k), v),
                        None => b.delete(key(*k)),
                    }
                }
                db.write(b).unwrap();
                for (k, v) in entries.into_iter().take(20) {
                    match v {
                        Some(v) => model.insert(key(k), v),
                        None => model.remove(&key(k)),
                    };
                }
            }
            Op::Get(k) => assert_eq!(db.get(key(k)).unwrap(), model.get(&key(k)).cloned()),
            Op::Scan(a, b) => {
                let (lo, hi) = (key(a.min(b)), key(a.max(b)));
                let got: Vec<_> = db
                    .range(lo.clone()..hi.clone())
                    .unwrap()
                    .map(|r| r.unwrap())
                    .collect();
                let want: Vec<_> = model
                    .range(lo..hi)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(got, want);
            }
            Op::Flush => db.flush().unwrap(),
            Op::Compact => db.compact_range::<&[u8], _>(..).unwrap(),
            Op::DeleteRange(a, b, shape) => {
                let r = range(a, b, shape);
                db.delete_range(r.clone()).unwrap();
                model.retain(|k, _| !in_range(k, &r));
            }
            Op::MixedBatch(ops) => {
                let mut b = WriteBatch::new();
                for op in ops.into_iter().take(20) {
                    match op {
                        BatchOp::Put(k, v) => {
                            b.put(key(k), &v);
                            model.insert(key(k), v);
                        }
                        BatchOp::Delete(k) => {
                            b.delete(key(k));
                            model.remove(&key(k));
                        }
                        BatchOp::DeleteRange(x, y, shape) => {
                            let r = range(x, y, shape);
                            b.delete_range(r.clone());
                            model.retain(|k, _| !in_range(k, &r));
                        }
                    }
                }
                db.write(b).unwrap();
            }
            Op::Reopen => {
                drop(db);
                db = Db::open(dir.path(), options()).unwrap();
            }
        }
    }
    let got: BTreeMap<_, _> = db.iter().unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(got, model);
});

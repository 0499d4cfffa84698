#![no_main]
//! Model-based: arbitrary operation sequences against a BTreeMap, with flushes,
//! compactions and reopens.
use std::collections::BTreeMap;

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
            Op::Reopen => {
                drop(db);
                db = Db::open(dir.path(), options()).unwrap();
            }
        }
    }
    let got: BTreeMap<_, _> = db.iter().unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(got, model);
});

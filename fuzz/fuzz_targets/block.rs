#![no_main]
//! Block decoding: any bytes either fail validation or iterate without
//! panicking; the point search (`seek_entry`) and the index fences find
//! what the iterator finds.
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use sievedb::iter::InternalIterator;
use sievedb::sst::block::{Block, BlockIter};
use sievedb::sst::fences::IndexFences;
use sievedb::sst::BlockHandle;

fuzz_target!(|data: &[u8]| {
    let Ok(block) = Block::new(data.to_vec()) else {
        return;
    };
    let mut it = BlockIter::new(Arc::new(block));
    let _ = it.seek_to_first();
    let mut keys = Vec::new();
    while it.valid() && keys.len() < 100_000 {
        keys.push(it.key().to_vec());
        let _ = it.value();
        let _ = it.next();
    }
    let block = Arc::new(Block::new(data.to_vec()).expect("validated above"));
    let fences = IndexFences::build(&block);
    let mut scratch = Vec::new();
    for k in &keys {
        let mut it = BlockIter::new(block.clone());
        let _ = it.seek(k);
        let found = block.seek_entry(k, &mut scratch);
        match (&found, it.error()) {
            (Ok(e), None) => {
                let want = it.valid().then(|| it.key().to_vec());
                assert_eq!(e.as_ref().map(|e| e.key.to_vec()), want);
            }
            (Err(_), Some(_)) => {}
            _ => panic!("seek_entry and the iterator disagree on an error"),
        }
        if let (Some(f), Ok(e)) = (&fences, &found) {
            let want = e.as_ref().and_then(|e| BlockHandle::decode(e.value));
            assert_eq!(f.seek(&block, k).ok().flatten(), want);
        }
    }
    let _ = it.seek(b"\x00\x00\x00\x00\x00\x00\x00\x00");
});

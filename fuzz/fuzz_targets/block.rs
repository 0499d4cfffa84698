#![no_main]
//! Block decoding: any bytes either fail validation or iterate without panicking.
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use sievedb::iter::InternalIterator;
use sievedb::sst::block::{Block, BlockIter};

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
    for k in &keys {
        let _ = it.seek(k);
    }
    let _ = it.seek(b"\x00\x00\x00\x00\x00\x00\x00\x00");
});

#![no_main]
//! WAL replay: framing and batch decoding of any bytes never panic.
use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(records) =
        sievedb::wal::read_records(data, Path::new("fuzz.log"), sievedb::wal::Tail::Lenient)
    else {
        return;
    };
    for r in records {
        if let Ok((_seq, entries)) = sievedb::batch::decode(r) {
            for e in entries {
                let _ = (e.kind, e.key.len(), e.value.len());
            }
        }
    }
});

#![no_main]
//! Filter decoding and probing: any section bytes decode to an error or a filter
//! that answers probes without panicking.
use libfuzzer_sys::fuzz_target;
use sievedb::filter::{Filter, KeyProbe};
use sievedb::HashSharing;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = Filter::decode(data) else { return };
    for key in [&b""[..], b"a", b"key000123", &data[..data.len().min(40)]] {
        let mut p = KeyProbe::new(key, HashSharing::Levels);
        let _ = f.may_contain(&mut p);
    }
    let _ = f.memory_bytes();
});

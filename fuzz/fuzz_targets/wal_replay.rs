#![no_main]
//! WAL replay: framing and batch decoding of any bytes never panic, and the
//! streaming reader with small chunks agrees with the whole-buffer one.
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sievedb::wal::{LogItem, LogReader, SliceFile, Tail};

fuzz_target!(|data: &[u8]| {
    let whole = sievedb::wal::read_records(data, Path::new("fuzz.log"), Tail::Lenient);
    let file = SliceFile(data);
    let mut reader = LogReader::new(&file, "fuzz.log").with_chunk_size(7);
    let mut streamed = Vec::new();
    let streamed_ok = loop {
        match reader.next_item() {
            Ok(LogItem::Record { payload, .. }) => streamed.push(payload.to_vec()),
            Ok(LogItem::End) => break true,
            Ok(LogItem::Damaged(d)) => break d.kind.is_torn_tail(Tail::Lenient),
            Err(_) => break false,
        }
    };
    let Ok(records) = whole else {
        assert!(
            !streamed_ok,
            "streaming accepted a log the buffer reader rejects"
        );
        return;
    };
    assert!(
        streamed_ok,
        "streaming rejected a log the buffer reader accepts"
    );
    assert_eq!(records.len(), streamed.len());
    for (r, s) in records.iter().zip(&streamed) {
        assert_eq!(*r, s.as_slice());
    }
    for r in records {
        if let Ok((_seq, entries)) = sievedb::batch::decode(r) {
            for e in entries {
                let _ = (e.kind, e.key.len(), e.value.len());
            }
        }
    }
});

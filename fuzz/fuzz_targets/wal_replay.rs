#![no_main]
//! WAL replay: framing, the scan past damage, sync marks and batch decoding
//! of any bytes never panic; the streaming reader with small chunks agrees
//! with the whole-buffer one, and the whole-buffer reader's tail rule (the
//! MANIFEST's) agrees with what the scan finds.
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sievedb::wal::{is_torn_tail, scan_remains, sync_mark, LogItem, LogReader, SliceFile};

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz.log");
    let file = SliceFile(data);
    let mut reader = LogReader::new(&file, path).with_chunk_size(7);
    let mut streamed = Vec::new();
    let damage = loop {
        match reader
            .next_item()
            .expect("a slice reads without I/O errors")
        {
            LogItem::Record { payload, .. } => streamed.push(payload.to_vec()),
            LogItem::End => break None,
            LogItem::Damaged(d) => break Some(d),
        }
    };
    let torn = match &damage {
        None => true,
        Some(d) => {
            let rest = scan_remains(&file, path, d.offset).expect("scan");
            let _ = is_torn_tail(d, &rest);
            assert!(rest.data_bytes <= data.len() as u64 - d.offset);
            let after = scan_remains(&file, path, d.offset + 1).expect("scan");
            d.kind.at_end() || after.first_record.is_none()
        }
    };
    match sievedb::wal::read_records(data, path) {
        Ok((records, tail)) => {
            assert!(
                torn,
                "the buffer reader dropped damage an intact record follows"
            );
            assert_eq!(tail, damage);
            assert_eq!(records.len(), streamed.len());
            for (r, s) in records.iter().zip(&streamed) {
                assert_eq!(*r, s.as_slice());
            }
        }
        Err(_) => assert!(!torn, "the buffer reader refused a torn tail"),
    }
    for r in &streamed {
        let _ = (sync_mark::parse(r), sync_mark::entries(r));
        if let Ok((_seq, entries)) = sievedb::batch::decode(r) {
            for e in entries {
                let _ = (e.kind, e.key.len(), e.value.len());
            }
        }
    }
});

//! The log format's tests: records written and read back, and every kind
//! of damage under both tail rules.

use std::path::Path;

use super::*;
use crate::io::WritableFile;

struct VecFile(std::sync::Arc<parking_lot::Mutex<Vec<u8>>>);
impl WritableFile for VecFile {
    fn append(&mut self, d: &[u8]) -> std::io::Result<()> {
        self.0.lock().extend_from_slice(d);
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn log_of(records: &[&[u8]]) -> Vec<u8> {
    let buf = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
    let mut w = LogWriter::new(Box::new(VecFile(buf.clone())), "x".into());
    for r in records {
        w.add_record(r).unwrap();
    }
    let v = buf.lock().clone();
    v
}

#[test]
fn roundtrip_and_torn_tail() {
    let data = log_of(&[b"one", b"", b"three"]);
    let p = Path::new("x");
    assert_eq!(
        read_records(&data, p, Tail::Lenient).unwrap(),
        vec![&b"one"[..], b"", b"three"]
    );
    for cut in 0..data.len() {
        let r = read_records(&data[..cut], p, Tail::Lenient).unwrap();
        assert!(r.len() <= 3);
    }
    let mut bad = data.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert_eq!(read_records(&bad, p, Tail::Lenient).unwrap().len(), 2);
    assert!(read_records(&bad, p, Tail::Strict).is_err());
}

#[test]
fn damage_before_tail_is_corruption() {
    let data = log_of(&[b"one", b"two", b"three"]);
    for i in 0..(HEADER_LEN + 3 + HEADER_LEN + 3) {
        let mut bad = data.clone();
        bad[i] ^= 0x40;
        assert!(
            read_records(&bad, Path::new("x"), Tail::Lenient).is_err(),
            "byte {i}"
        );
    }
}
/// Reads `data` with `chunk`-byte reads: the payloads and how it ended.
fn stream(data: &[u8], chunk: usize) -> (Vec<Vec<u8>>, Option<Damage>) {
    let file = SliceFile(data);
    let mut r = LogReader::new(&file, "x").with_chunk_size(chunk);
    let mut out = Vec::new();
    loop {
        match r.next_item().unwrap() {
            LogItem::Record { offset, payload } => {
                assert_eq!(
                    &data[offset as usize + HEADER_LEN..][..payload.len()],
                    payload
                );
                out.push(payload.to_vec());
            }
            LogItem::End => return (out, None),
            LogItem::Damaged(d) => {
                // Asking again returns the same damage.
                assert_eq!(r.next_item().unwrap(), LogItem::Damaged(d.clone()));
                return (out, Some(d));
            }
        }
    }
}

fn records(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| (0..(i * 37) % 300).map(|j| (i * 7 + j) as u8 | 1).collect())
        .collect()
}

#[test]
fn streaming_reader_matches_whole_buffer_across_chunk_edges() {
    let recs = records(30);
    let refs: Vec<&[u8]> = recs.iter().map(Vec::as_slice).collect();
    let data = log_of(&refs);
    for chunk in [1, 2, 5, 11, 12, 13, 64, 299, 4096, data.len(), 1 << 20] {
        let (got, end) = stream(&data, chunk);
        assert_eq!(got, recs, "chunk {chunk}");
        assert_eq!(end, None, "chunk {chunk}");
    }
    // Every cut: exactly the records complete before it, then the clean
    // end (a cut on a record boundary) or a truncated tail at the end of
    // the last complete record.
    let ends: Vec<usize> = recs
        .iter()
        .scan(0, |end, r| {
            *end += HEADER_LEN + r.len();
            Some(*end)
        })
        .collect();
    for cut in 0..data.len() {
        let complete = ends.iter().filter(|&&e| e <= cut).count();
        let prefix = if complete == 0 { 0 } else { ends[complete - 1] };
        for chunk in [3, 12, 100] {
            let (got, end) = stream(&data[..cut], chunk);
            assert_eq!(got, recs[..complete], "cut {cut} chunk {chunk}");
            if prefix == cut {
                assert_eq!(end, None, "cut {cut} chunk {chunk}");
            } else {
                let d = end.expect("a cut inside a record is a torn tail");
                assert_eq!((d.kind, d.offset), (DamageKind::Truncated, prefix as u64));
            }
        }
    }
}

#[test]
fn streaming_reader_memory_is_bounded_by_record_and_chunk() {
    let recs: Vec<Vec<u8>> = (0..200).map(|i| vec![i as u8; 1000]).collect();
    let refs: Vec<&[u8]> = recs.iter().map(Vec::as_slice).collect();
    let data = log_of(&refs);
    let file = SliceFile(&data);
    let mut r = LogReader::new(&file, "x").with_chunk_size(4096);
    let mut n = 0;
    while let LogItem::Record { .. } = r.next_item().unwrap() {
        n += 1;
    }
    assert_eq!(n, 200);
    assert!(
        r.buffer_capacity() <= 3 * 4096,
        "buffer grew to {} for a {}-byte log",
        r.buffer_capacity(),
        data.len()
    );
}

#[test]
fn streaming_reader_classifies_damage() {
    let data = log_of(&[b"one", b"two", b"three"]);
    let last = HEADER_LEN * 2 + 6;
    // Zero tail after good records, longer than a chunk.
    let mut z = data.clone();
    z.extend(std::iter::repeat_n(0u8, 50));
    let (got, end) = stream(&z, 7);
    assert_eq!(got.len(), 3);
    let end = end.unwrap();
    assert_eq!(
        (end.kind, end.offset),
        (DamageKind::Zeroed, data.len() as u64)
    );
    // Garbage after zeros: a bad header with non-zero bytes later is corruption.
    let mut g = z.clone();
    *g.last_mut().unwrap() = 9;
    let (got, end) = stream(&g, 7);
    assert_eq!(got.len(), 3);
    assert_eq!(end.unwrap().kind, DamageKind::Corrupt);
    // A flipped payload byte of the last record: BadLastRecord.
    let mut b = data.clone();
    *b.last_mut().unwrap() ^= 1;
    let end = stream(&b, 5).1.unwrap();
    assert_eq!(
        (end.kind, end.offset),
        (DamageKind::BadLastRecord, last as u64)
    );
    assert!(end.kind.is_torn_tail(Tail::Lenient));
    assert!(!end.kind.is_torn_tail(Tail::Strict));
    // A flipped byte of the second record: corruption at its offset.
    let mut m = data.clone();
    m[HEADER_LEN + 3 + HEADER_LEN] ^= 1;
    let (got, end) = stream(&m, 5);
    assert_eq!(got.len(), 1);
    let end = end.unwrap();
    assert_eq!(
        (end.kind, end.offset),
        (DamageKind::Corrupt, (HEADER_LEN + 3) as u64)
    );
    let e = end.to_error(Path::new("000007.log")).to_string();
    assert!(e.contains("000007.log") && e.contains("offset 15"), "{e}");
    // The last record's payload zeroed: Zeroed (torn under both rules).
    let mut zl = data.clone();
    let n = zl.len();
    zl[n - 5..].fill(0);
    let end = stream(&zl, 4).1.unwrap();
    assert_eq!(end.kind, DamageKind::Zeroed);
    assert_eq!(
        read_records(&zl, Path::new("x"), Tail::Strict)
            .unwrap()
            .len(),
        2
    );
}

/// A preallocated (mapped) WAL killed while copying its last record: the
/// record is partly written and zeros follow; whatever part was written,
/// the records before it are read and the tail is torn (WAL) but never
/// silently dropped from a MANIFEST. Damage with a non-zero byte after
/// it stays corruption.
#[test]
fn a_torn_record_followed_by_preallocated_zeros_is_a_torn_tail() {
    let data = log_of(&[b"one", b"two", b"three-and-more"]);
    let last = HEADER_LEN * 2 + 6;
    let p = Path::new("x");
    // The header is copied before the payload, but a copy need not store
    // in order: each prefix of the last record's bytes; each byte of its
    // header missing, with no payload; each byte of its payload missing.
    let mut cases = Vec::new();
    for keep in 1..data.len() - last {
        let mut d = data.clone();
        d[last + keep..].fill(0);
        cases.push(d);
    }
    for hole in last..data.len() {
        let mut d = data.clone();
        d[hole] = 0;
        if hole < last + HEADER_LEN {
            d[last + HEADER_LEN..].fill(0);
        }
        cases.push(d);
    }
    for mut d in cases {
        if d == data {
            continue; // the zeroed byte was a zero already
        }
        d.extend(std::iter::repeat_n(0u8, 100));
        let (got, end) = stream(&d, 7);
        assert_eq!(got.len(), 2, "{d:?}");
        let end = end.unwrap();
        assert_eq!(end.offset, last as u64);
        assert!(end.kind.is_torn_tail(Tail::Lenient), "{end:?}");
        assert_eq!(read_records(&d, p, Tail::Lenient).unwrap().len(), 2);
        if end.kind == DamageKind::BadLastRecord {
            assert!(read_records(&d, p, Tail::Strict).is_err());
        }
        // One non-zero byte after the record: corruption, not a tail.
        *d.last_mut().unwrap() = 1;
        let end = stream(&d, 7).1.unwrap();
        assert_eq!(end.kind, DamageKind::Corrupt, "{end:?}");
    }
}

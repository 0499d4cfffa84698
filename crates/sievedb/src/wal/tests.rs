//! The log format's tests: records written and read back, every kind of
//! damage, the MANIFEST's tail rule, sync marks and the scan past damage.

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
        read_records(&data, p).unwrap(),
        (vec![&b"one"[..], b"", b"three"], None)
    );
    for cut in 0..data.len() {
        let r = read_records(&data[..cut], p).unwrap().0;
        assert!(r.len() <= 3);
    }
    // A flipped byte of the last record: no record follows, so it was
    // never synced (the MANIFEST syncs each record before the next).
    let mut bad = data.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    let (recs, torn) = read_records(&bad, p).unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(torn.unwrap().kind, DamageKind::BadLastRecord);
}

#[test]
fn damage_before_tail_is_corruption() {
    let data = log_of(&[b"one", b"two", b"three"]);
    for i in 0..(HEADER_LEN + 3 + HEADER_LEN + 3) {
        let mut bad = data.clone();
        bad[i] ^= 0x40;
        assert!(read_records(&bad, Path::new("x")).is_err(), "byte {i}");
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
    #[expect(clippy::cast_sign_loss, reason = "0..200 is not negative")]
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
    assert!(end.kind.at_end());
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
    // The last record's payload zeroed: a bad last record.
    let mut zl = data.clone();
    let n = zl.len();
    zl[n - 5..].fill(0);
    let end = stream(&zl, 4).1.unwrap();
    assert_eq!(end.kind, DamageKind::BadLastRecord);
    assert_eq!(read_records(&zl, Path::new("x")).unwrap().0.len(), 2);
}

/// A preallocated (mapped) WAL killed while copying its last record: the
/// record is partly written and zeros follow; whatever part was written,
/// the records before it are read and the tail is torn. Damage with a
/// non-zero byte after it is not at the end.
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
        assert!(end.kind.at_end(), "{end:?}");
        assert_eq!(read_records(&d, p).unwrap().0.len(), 2);
        // One non-zero byte after the record: not at the end.
        *d.last_mut().unwrap() = 1;
        let end = stream(&d, 7).1.unwrap();
        assert_eq!(end.kind, DamageKind::Corrupt, "{end:?}");
    }
}

/// A log whose last record a power loss tore out of order: zeros where its
/// first bytes should be, a fragment of it after. No record follows, so the
/// MANIFEST's rule drops it; an intact record after the hole makes it
/// corruption.
#[test]
fn a_hole_then_a_fragment_is_a_torn_tail_unless_a_record_follows() {
    let data = log_of(&[b"one", b"two", b"three-and-a-longer-payload"]);
    let last = HEADER_LEN * 2 + 6;
    let p = Path::new("MANIFEST-000001");
    for hole in 1..data.len() - last - 1 {
        let mut d = data.clone();
        d[last..last + hole].fill(0);
        let (recs, torn) = read_records(&d, p).unwrap();
        assert_eq!(recs.len(), 2, "hole of {hole}");
        assert_eq!(torn.unwrap().offset, last as u64);
        let mut followed = d.clone();
        followed.extend(log_of(&[b"four"]));
        assert!(read_records(&followed, p).is_err(), "hole of {hole}");
    }
}

#[test]
fn scan_finds_intact_records_past_damage_at_any_offset() {
    let mut b = crate::WriteBatch::new();
    b.put("k", "v");
    b.delete("x");
    let batch = b.encode(9).to_vec();
    let tail = log_of(&[&batch, &sync_mark::encode(77), &batch]);
    for junk in 0..40usize {
        let mut d: Vec<u8> = (0..junk).map(|i| (i as u8).wrapping_mul(31) | 1).collect();
        d.extend(std::iter::repeat_n(0u8, 5000));
        let at = d.len() as u64;
        d.extend(&tail);
        d.extend(std::iter::repeat_n(0u8, 300));
        let r = scan_remains(&SliceFile(&d), Path::new("x"), 0).unwrap();
        assert_eq!(r.records, 2, "junk {junk}");
        assert_eq!(r.entries, 4);
        assert_eq!(r.synced, 77);
        assert_eq!(r.first_record, Some(at));
        assert_eq!(r.data_bytes, at + tail.len() as u64);
    }
    let zeros = vec![0u8; 1000];
    assert_eq!(
        scan_remains(&SliceFile(&zeros), Path::new("x"), 10).unwrap(),
        Remains::default()
    );
}

/// The writer marks a completed sync at the start of the next group, once.
#[test]
fn a_sync_is_marked_before_the_next_records() {
    let buf = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
    let mut w = LogWriter::new(Box::new(VecFile(buf.clone())), "x".into());
    assert_eq!(w.mark_sync().unwrap(), 0, "nothing synced yet");
    w.add_record(b"a").unwrap();
    w.sync().unwrap();
    let synced = w.size();
    assert_eq!(w.mark_sync().unwrap(), (HEADER_LEN + sync_mark::LEN) as u64);
    assert_eq!(w.mark_sync().unwrap(), 0, "already marked");
    w.add_record(b"b").unwrap();
    let data = buf.lock().clone();
    let recs = read_records(&data, Path::new("x")).unwrap().0;
    assert_eq!(recs.len(), 3);
    assert_eq!(sync_mark::parse(recs[1]), Some(synced));
}

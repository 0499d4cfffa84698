//! Shared helpers of the fuzz targets.

use std::io;
use std::path::Path;
use std::sync::Arc;

use sievedb::io::RandomAccessFile;
use sievedb::iter::InternalIterator;
use sievedb::sst::TableReader;
use sievedb::stats::Counters;

/// A file held in memory.
pub struct MemFile(pub Vec<u8>);

impl RandomAccessFile for MemFile {
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let end = start.checked_add(len).ok_or(io::ErrorKind::UnexpectedEof)?;
        self.0
            .get(start..end)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| io::ErrorKind::UnexpectedEof.into())
    }
    fn size(&self) -> u64 {
        self.0.len() as u64
    }
}

/// Opens `data` as an SST and reads all of it; any outcome but a panic is fine.
pub fn exercise_sst(data: &[u8]) {
    let file = Arc::new(MemFile(data.to_vec()));
    let counters = Arc::new(Counters::new(7));
    let Ok(t) = TableReader::from_file(file, Path::new("fuzz.sst"), 1, true, None, counters) else {
        return;
    };
    let t = Arc::new(t);
    if let Some(index) = t.filter_index() {
        let _ = t.load_filter_units(index.empty(), index.units());
    }
    let ctx = sievedb::sst::reader::ReadCtx {
        level: 0,
        fill_cache: false,
        verify_checksums: true,
    };
    let mut it = t.iter(ctx);
    let mut keys = Vec::new();
    if it.seek_to_first().is_ok() {
        while it.valid() && keys.len() < 10_000 {
            keys.push(it.key().to_vec());
            if it.next().is_err() {
                break;
            }
        }
    }
    for k in keys.iter().step_by(7) {
        let user = sievedb::key::user_key(k);
        let mut probe = sievedb::filter::KeyProbe::new(user, sievedb::HashSharing::Levels);
        let _ = t.get(&mut probe, k, ctx, true, 0);
        let _ = it.seek(k);
    }
}

//! Writes the seed corpora of the fuzz targets into `fuzz/corpus/<target>/`
//! from a small real database. Run from `fuzz/`: `cargo run --bin make-corpus`.

use std::fs;
use std::path::Path;

use sievedb::{Db, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = Path::new("corpus");
    let dir = tempfile::tempdir()?;
    let opts = Options::builder()
        .write_buffer_size(4096)
        .block_size(256)
        .build();
    {
        let db = Db::open(dir.path(), opts.clone())?;
        for i in 0..300u32 {
            db.put(format!("key{i:05}"), format!("value-{i}"))?;
        }
        db.flush()?;
        for i in 0..40u32 {
            db.delete(format!("key{:05}", i * 3))?;
        }
        db.close()?;
    }
    for t in [
        "block",
        "sst_open",
        "filter",
        "wal_replay",
        "manifest_replay",
        "model",
    ] {
        fs::create_dir_all(out.join(t))?;
    }
    for entry in fs::read_dir(dir.path())? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let data = fs::read(entry.path())?;
        if name.ends_with(".sst") && data.len() < 64 << 10 {
            fs::write(out.join("sst_open").join(&name), &data)?;
            // The filter section, located through the footer.
            let f = data.len() - 64;
            let off = u64::from_le_bytes(data[f + 16..f + 24].try_into()?) as usize;
            let len = u64::from_le_bytes(data[f + 24..f + 32].try_into()?) as usize;
            if len > 0 {
                fs::write(out.join("filter").join(&name), &data[off..off + len])?;
            }
        } else if name.ends_with(".log") && !data.is_empty() {
            fs::write(out.join("wal_replay").join(&name), &data)?;
        } else if name.starts_with("MANIFEST-") {
            fs::write(out.join("manifest_replay").join(&name), &data)?;
        }
    }
    // Tables of a two-level index and partitioned filters (SST format 2).
    let two = tempfile::tempdir()?;
    let mut two_opts = opts.clone();
    two_opts.index_partition_bytes = Some(64);
    two_opts.filter.partition_bytes = Some(64);
    {
        let db = Db::open(two.path(), two_opts)?;
        for i in 0..300u32 {
            db.put(format!("key{i:05}"), format!("value-{i}"))?;
        }
        db.flush()?;
        db.close()?;
    }
    for entry in fs::read_dir(two.path())? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let data = fs::read(entry.path())?;
        if name.ends_with(".sst") && data.len() < 64 << 10 {
            fs::write(
                out.join("sst_open").join(format!("two-level-{name}")),
                &data,
            )?;
        }
    }
    for (i, interval) in [1usize, 4, 16].into_iter().enumerate() {
        let mut b = sievedb::sst::block::BlockBuilder::new(interval);
        for k in 0..40u32 {
            let ik = sievedb::key::internal_key(
                format!("key{k:04}").as_bytes(),
                9,
                sievedb::key::Kind::Put,
            );
            b.add(&ik, format!("v{k}").as_bytes());
        }
        fs::write(out.join("block").join(format!("block-{i}")), b.finish())?;
    }
    fs::write(
        out.join("model").join("seed-1"),
        b"\x00\x01\x02abc\x01\x05\x06\x07\x03\x04",
    )?;
    Ok(())
}

#![no_main]
//! MANIFEST replay: a directory whose CURRENT names a MANIFEST of arbitrary
//! bytes opens or fails with an error, never a panic.
use libfuzzer_sys::fuzz_target;
use sievedb::version::VersionEdit;

fuzz_target!(|data: &[u8]| {
    // Edit decoding on its own, then the whole recovery path on a real directory.
    if let Ok((records, _torn)) =
        sievedb::wal::read_records(data, std::path::Path::new("MANIFEST-000001"))
    {
        for r in records {
            let _ = VersionEdit::decode(r);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("MANIFEST-000001"), data).unwrap();
    std::fs::write(dir.path().join("CURRENT"), b"MANIFEST-000001\n").unwrap();
    if let Ok(db) = sievedb::Db::open(dir.path(), sievedb::Options::default()) {
        let _ = db.get(b"k");
        let _ = db.iter().map(|it| it.take(100).count());
    }
});

//! Block compression: zstd and LZ4 chosen per level, and trees whose levels
//! were written with different compressions reopening under other settings.

use sievedb::{Compression, Db, Error, Options};

/// A value that compresses well: a short pattern with the key mixed in.
fn value(i: u32) -> Vec<u8> {
    format!("{i:08}-the-quick-brown-fox-jumps-over-the-lazy-dog-")
        .repeat(4)
        .into_bytes()
}

fn key(i: u32) -> Vec<u8> {
    format!("key{:08}", i.wrapping_mul(2_654_435_761) % 1_000_000).into_bytes()
}

fn opts(per_level: Vec<Compression>) -> Options {
    Options::builder()
        .write_buffer_size(64 << 10)
        .target_file_size(64 << 10)
        .level1_size(256 << 10)
        .compression_per_level(per_level)
        .build()
}

/// Writes `n` keys, waits for compactions, returns the bytes of the SSTs.
fn fill(db: &Db, n: u32) -> u64 {
    for i in 0..n {
        db.put(key(i), value(i)).unwrap();
    }
    db.wait_for_compactions().unwrap();
    db.stats().levels.iter().map(|l| l.bytes).sum()
}

fn check(db: &Db, n: u32) {
    for i in (0..n).step_by(7) {
        assert_eq!(db.get(key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    assert_eq!(db.iter().unwrap().count(), n as usize);
}

#[test]
fn zstd_round_trips_at_every_level_and_shrinks_files() {
    let n = 20_000;
    let mut sizes = Vec::new();
    for c in [Compression::None, Compression::Lz4, Compression::zstd()] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), opts(vec![c])).unwrap();
        let bytes = fill(&db, n);
        let levels = db.stats().levels.iter().filter(|l| l.files > 0).count();
        assert!(levels >= 2, "{c}: data should span levels, got {levels}");
        check(&db, n);
        drop(db);
        let db = Db::open(dir.path(), opts(vec![c])).unwrap();
        check(&db, n);
        sizes.push(bytes);
    }
    let (none, lz4, zstd) = (sizes[0], sizes[1], sizes[2]);
    assert!(lz4 < none * 3 / 4, "lz4 {lz4} vs none {none}");
    assert!(zstd < lz4, "zstd {zstd} vs lz4 {lz4}");
}

#[test]
fn mixed_compression_tree_reopens_under_other_settings() {
    let dir = tempfile::tempdir().unwrap();
    let first = vec![Compression::Lz4, Compression::zstd(), Compression::Zstd(19)];
    let db = Db::open(dir.path(), opts(first)).unwrap();
    fill(&db, 15_000);
    drop(db);
    // Every file stays readable whatever the levels now ask for; new
    // compactions then write the new choices beside the old files.
    let second = vec![Compression::Zstd(-5), Compression::None, Compression::Lz4];
    let db = Db::open(dir.path(), opts(second)).unwrap();
    check(&db, 15_000);
    for i in 15_000..25_000 {
        db.put(key(i), value(i)).unwrap();
    }
    db.wait_for_compactions().unwrap();
    check(&db, 25_000);
    drop(db);
    let db = Db::open(dir.path(), opts(vec![Compression::None])).unwrap();
    check(&db, 25_000);
}

#[test]
fn compression_names_parse_and_bad_levels_are_refused() {
    assert_eq!("none".parse::<Compression>().unwrap(), Compression::None);
    assert_eq!("lz4".parse::<Compression>().unwrap(), Compression::Lz4);
    assert_eq!("zstd".parse::<Compression>().unwrap(), Compression::zstd());
    assert_eq!(
        "zstd:7".parse::<Compression>().unwrap(),
        Compression::Zstd(7)
    );
    assert_eq!(Compression::Zstd(7).to_string(), "zstd:7");
    for bad in ["zstd:x", "zstd:99", "snappy", ""] {
        assert!(
            matches!(bad.parse::<Compression>(), Err(Error::InvalidArgument(_))),
            "{bad}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let r = Db::open(dir.path(), opts(vec![Compression::Zstd(1000)]));
    assert!(matches!(r, Err(Error::InvalidArgument(_))));
}
